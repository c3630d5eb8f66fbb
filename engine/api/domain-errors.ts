import type { AuthErrorKind } from '../auth/accounts';
import type { DeliveryErrorKind } from '../callbacks/delivery-error';
import type { ClipErrorKind } from '../clips/clip-settings';
import type { ClusterErrorKind } from '../cluster/owner-routing';
import type { RulesErrorKind } from '../cluster/site-rules';
import type { ErrorKind } from '../contract/errors';
import { DomainError } from '../domain-error';
import type { AlarmErrorKind } from '../events/review';
import type { ReviewErrorKind } from '../events/review-items';
import type { ImageErrorKind } from '../images/image-error';
import type { CheckErrorKind } from '../inference/checker';
import type { LiveErrorKind } from '../live/limits';
import type { SourceErrorKind } from '../media/source-refusal';
import type { OptimizationErrorKind } from '../optimization/optimization-error';
import type { PackageErrorKind } from '../packages/registry';
import type { TaskErrorKind } from '../tasks/task-error';
import { ApiError } from './errors';

/**
 * Every domain error kind and the envelope error it answers with: the one place where the domain's
 * words become HTTP. DomainErrorKind is the union of every module's kinds, so a kind left out fails the type check.
 */
type DomainErrorKind =
  | never
  | PackageErrorKind
  | ImageErrorKind
  | AuthErrorKind
  | DeliveryErrorKind
  | AlarmErrorKind
  | ReviewErrorKind
  | OptimizationErrorKind
  | TaskErrorKind
  | LiveErrorKind
  | SourceErrorKind
  | CheckErrorKind
  | ClusterErrorKind
  | RulesErrorKind
  | ClipErrorKind;
const DOMAIN_ERRORS: Record<DomainErrorKind, ErrorKind> = {
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
  'auth.weak_password': 'INVALID_PARAMETER',
  'auth.wrong_current_password': 'INVALID_PARAMETER',
  'delivery.event_not_found': 'EVENT_NOT_FOUND',
  'alarm.not_found': 'EVENT_NOT_FOUND',
  'alarm.no_image': 'EVENT_NOT_FOUND',
  'review.not_found': 'REVIEW_ITEM_NOT_FOUND',
  'review.invalid': 'INVALID_PARAMETER',
  'delivery.no_receiver': 'NO_RECEIVER',
  'delivery.invalid_mqtt_settings': 'INVALID_PARAMETER',
  'optimization.not_found': 'OPTIMIZATION_NOT_FOUND',
  'optimization.sample_not_found': 'SAMPLE_NOT_FOUND',
  'optimization.running': 'OPTIMIZATION_RUNNING',
  'optimization.invalid_judgement': 'INVALID_PARAMETER',
  'task.invalid': 'INVALID_PARAMETER',
  'task.not_found': 'TASK_NOT_FOUND',
  'task.closed': 'TASK_CLOSED',
  'task.not_closed': 'TASK_NOT_CLOSED',
  'task.wrong_mode': 'WRONG_TASK_MODE',
  'source.too_large': 'SOURCE_TOO_LARGE',
  'source.unavailable': 'STREAM_UNAVAILABLE',
  'task.license_expired': 'LICENSE_EXPIRED',
  'task.not_change_detection_app': 'NOT_CHANGE_DETECTION_APP',
  'task.change_detection_not_diff': 'CHANGE_DETECTION_NOT_DIFF',
  'task.time_series_not_video': 'TIME_SERIES_NOT_VIDEO',
  'task.image_too_soon': 'IMAGE_TOO_SOON',
  'cluster.owner_unreachable': 'OWNER_UNREACHABLE',
  'cluster.app_edit_conflict': 'APP_EDIT_CONFLICT',
  'cluster.take_refused': 'TAKE_REFUSED',
  'live.limit': 'VIDEO_LIMIT',
  'clip.not_found': 'CLIP_NOT_FOUND',
  'clip.not_ready': 'CLIP_NOT_READY',
  'clip.invalid_settings': 'INVALID_PARAMETER',
};

/** The envelope error for a domain error; undefined for anything else. */
export function toApiError(error: unknown): ApiError | undefined {
  if (!(error instanceof DomainError)) return undefined;
  const kind = (DOMAIN_ERRORS as Record<string, ErrorKind | undefined>)[error.kind];
  if (!kind) return undefined;
  const { field, retryAfterS, reason } = error.details;
  const headers: Record<string, string> =
    retryAfterS === undefined ? {} : { 'retry-after': String(retryAfterS) };
  return new ApiError(kind, error.message, headers, field, reason);
}
