import { describe, expect, it } from 'vitest';
import { toApiError } from '../engine/api/domain-errors';
import { DEFAULT_TOPIC, type MqttSettings, mergeMqttSettings } from '../engine/callbacks/mqtt-settings';
import { ERRORS, type ErrorKind } from '../engine/contract/errors';
import { DomainError } from '../engine/domain-error';
import { inspectImage } from '../engine/images/decode';

/** What each domain kind of packages, images, auth, delivery, optimization and tasks answered as ApiError before. */
const ANSWERS: Record<string, ErrorKind> = {
  'package.not_found': 'PACKAGE_NOT_FOUND',
  'package.app_not_found': 'APP_NOT_FOUND',
  'package.in_use': 'PACKAGE_IN_USE',
  'package.invalid_rule': 'INVALID_PARAMETER',
  'package.invalid': 'INVALID_PACKAGE',
  'model.checks_busy': 'MODEL_CHECKS_BUSY',
  'image.unsupported_type': 'UNSUPPORTED_IMAGE_TYPE',
  'image.invalid': 'INVALID_IMAGE',
  'image.too_large': 'IMAGE_TOO_LARGE',
  'image.busy': 'IMAGES_BUSY',
  'image.too_soon': 'IMAGE_TOO_SOON',
  'image.no_reference': 'NO_REFERENCE_IMAGE',
  'image.not_registered': 'IMAGES_NOT_REGISTERED',
  'image.model_not_supported': 'MODEL_NOT_SUPPORTED',
  'auth.bad_credentials': 'BAD_CREDENTIALS',
  'auth.too_many_logins': 'TOO_MANY_LOGINS',
  'delivery.event_not_found': 'EVENT_NOT_FOUND',
  'delivery.no_receiver': 'NO_RECEIVER',
  'delivery.invalid_mqtt_settings': 'INVALID_PARAMETER',
  'optimization.not_found': 'OPTIMIZATION_NOT_FOUND',
  'optimization.sample_not_found': 'SAMPLE_NOT_FOUND',
  'optimization.running': 'OPTIMIZATION_RUNNING',
  'task.invalid': 'INVALID_PARAMETER',
  'task.not_found': 'TASK_NOT_FOUND',
  'task.closed': 'TASK_CLOSED',
  'task.wrong_mode': 'WRONG_TASK_MODE',
  'source.too_large': 'SOURCE_TOO_LARGE',
  'source.unavailable': 'STREAM_UNAVAILABLE',
  'task.license_expired': 'LICENSE_EXPIRED',
  'task.not_change_detection_app': 'NOT_CHANGE_DETECTION_APP',
  'task.change_detection_not_diff': 'CHANGE_DETECTION_NOT_DIFF',
  'task.time_series_not_video': 'TIME_SERIES_NOT_VIDEO',
  'task.image_too_soon': 'IMAGE_TOO_SOON',
};

const answerOf = (error: unknown) => {
  const api = toApiError(error);
  return (
    api && { code: api.code, status: api.status, msg: api.message, headers: api.headers, field: api.field }
  );
};

describe('domain error kinds of packages, images, auth, delivery and optimization', () => {
  it('each answers with the envelope code it had as an ApiError, msg unchanged', () => {
    for (const [kind, name] of Object.entries(ANSWERS)) {
      expect([kind, answerOf(new DomainError(kind, 'why'))]).toEqual([
        kind,
        { code: ERRORS[name].code, status: ERRORS[name].status, msg: 'why', headers: {}, field: undefined },
      ]);
    }
  });

  it('sends Retry-After where the error says when to try again', () => {
    expect(answerOf(new DomainError('auth.too_many_logins', 'wait', { retryAfterS: 7 }))?.headers).toEqual({
      'retry-after': '7',
    });
  });

  it('names the request field at fault', async () => {
    const current: MqttSettings = {
      enabled: false,
      url: '',
      client_id: '',
      username: '',
      password: '',
      topic: DEFAULT_TOPIC,
      tls: { reject_unauthorized: true, ca: '' },
    };
    const mqtt = (() => {
      try {
        return mergeMqttSettings(current, { tls: { ca: 'not pem' } });
      } catch (error) {
        return answerOf(error);
      }
    })();
    expect(mqtt).toEqual({
      code: ERRORS.INVALID_PARAMETER.code,
      status: 400,
      msg: 'body.tls.ca: must be PEM text with at least one "-----BEGIN CERTIFICATE-----" block',
      headers: {},
      field: 'tls.ca',
    });
    const image = await inspectImage(Buffer.from('not an image'), 'body.image_a').catch(answerOf);
    expect(image).toEqual({
      code: ERRORS.UNSUPPORTED_IMAGE_TYPE.code,
      status: 415,
      msg: 'body.image_a: is not a JPEG, PNG, BMP or WebP image',
      headers: {},
      field: 'image_a',
    });
  });
});
