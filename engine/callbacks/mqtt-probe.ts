import { randomBytes } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { connect } from 'mqtt';
import type { MqttSettings } from './mqtt-settings';

/** How long a connection test waits for the broker's CONNACK before it answers "timeout". */
export const MQTT_TEST_TIMEOUT_MS = 5_000;
/** Connection tests at once; another asked meanwhile answers "busy" at once, opening nothing. */
export const MAX_MQTT_TESTS = 1;

export const MqttTestOutcome = Type.Union(
  [
    Type.Literal('connected'),
    Type.Literal('refused'),
    Type.Literal('unreachable'),
    Type.Literal('timeout'),
    Type.Literal('bad_credentials'),
    Type.Literal('tls'),
    Type.Literal('busy'),
    Type.Literal('error'),
  ],
  {
    description:
      'connected; refused (nothing listens at that port); unreachable (the host name does not resolve, or no route); timeout (no answer in 5 s); bad_credentials (the broker refused the user name and password, or their absence); tls (the broker certificate was refused); busy (another test runs); error (anything else, in detail)',
  },
);
export type MqttTestOutcome = Static<typeof MqttTestOutcome>;

export const MqttTestResult = Type.Object({
  ok: Type.Boolean(),
  outcome: MqttTestOutcome,
  detail: Type.Union([Type.String(), Type.Null()], { description: 'What the client or broker said' }),
  elapsed_ms: Type.Integer(),
});
export type MqttTestResult = Static<typeof MqttTestResult>;

const CODE_OUTCOMES: Record<string, MqttTestOutcome> = {
  ECONNREFUSED: 'refused',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ETIMEDOUT: 'timeout',
};
/**
 * CONNACK return codes (MQTT 3.1.1) and MQTT 5 reason codes. "Not authorized" counts as bad
 * credentials: it is what mosquitto answers a wrong password with.
 */
const REASON_OUTCOMES: Record<number, MqttTestOutcome> = {
  4: 'bad_credentials',
  5: 'bad_credentials',
  134: 'bad_credentials',
  135: 'bad_credentials',
};

function outcomeOf(error: Error & { code?: string | number }): MqttTestOutcome {
  if (typeof error.code === 'number') return REASON_OUTCOMES[error.code] ?? 'error';
  if (error.message === 'connack timeout') return 'timeout';
  if (error.code && CODE_OUTCOMES[error.code]) return CODE_OUTCOMES[error.code] as MqttTestOutcome;
  if (error.code?.startsWith('ERR_TLS') || /certificate|self[- ]signed|SSL/i.test(error.message))
    return 'tls';
  return 'error';
}

/**
 * Connects once with the given settings and says how it went, then disconnects. Under a client id of
 * its own: the publisher's id would throw the publisher's connection off the broker. Nothing retries.
 */
export function probeMqtt(settings: MqttSettings, timeoutMs = MQTT_TEST_TIMEOUT_MS): Promise<MqttTestResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const client = connect(settings.url, {
      clientId: `${settings.client_id || 'vision-console'}-test-${randomBytes(3).toString('hex')}`,
      username: settings.username || undefined,
      password: settings.password || undefined,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: timeoutMs,
      rejectUnauthorized: settings.tls.reject_unauthorized,
      ca: settings.tls.ca || undefined,
    });
    let settled = false;
    const finish = (outcome: MqttTestOutcome, detail: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.end(true);
      resolve({
        ok: outcome === 'connected',
        outcome,
        detail,
        elapsed_ms: Math.round(performance.now() - started),
      });
    };
    const timer = setTimeout(() => finish('timeout', `no answer within ${timeoutMs} ms`), timeoutMs);
    client.once('connect', () => finish('connected', null));
    client.once('error', (error) => finish(outcomeOf(error), error.message));
    // Closed without an error (e.g. the broker hung up before CONNACK).
    client.once('close', () => finish('error', 'the broker closed the connection'));
  });
}
