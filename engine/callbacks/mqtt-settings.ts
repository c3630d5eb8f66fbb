import { randomBytes } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { DomainError } from '../domain-error';
import type { SettingsRepository } from '../store/settings-repository';
import type { DeliveryErrorKind } from './delivery-error';

const KEY = 'mqtt';
/** The contract's topic (api-decisions.md, callbacks): what a template left unset publishes on. */
export const DEFAULT_TOPIC = 'vision/{task_id}/{app_id}';
const PLACEHOLDERS = new Set(['{task_id}', '{app_id}']);

/** PUT /api/settings/mqtt: omitted fields keep their stored value; "" clears username or password. */
export const MqttSettingsBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    url: Type.Optional(
      Type.String({ maxLength: 2048, description: 'mqtt://host[:port] or mqtts://host[:port]' }),
    ),
    client_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        pattern: '^[\\x21-\\x7E]+$',
        description: 'Printable ASCII',
      }),
    ),
    username: Type.Optional(Type.String({ maxLength: 256 })),
    password: Type.Optional(Type.String({ maxLength: 1024, description: 'Write-only; never returned' })),
    topic: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: `Extension: the topic template; {task_id} and {app_id} (_task for task events) are filled in. Default ${DEFAULT_TOPIC}`,
      }),
    ),
    tls: Type.Optional(
      Type.Object(
        {
          reject_unauthorized: Type.Optional(
            Type.Boolean({
              description: "Refuse a broker certificate the CAs don't vouch for (default true)",
            }),
          ),
          ca: Type.Optional(
            Type.String({
              maxLength: 65_536,
              description: 'PEM certificate(s) to trust; "" = the system CAs',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type MqttSettingsBody = Static<typeof MqttSettingsBody>;

export const MqttStatus = Type.Object({
  connected: Type.Boolean(),
  last_error: Type.Union([Type.String(), Type.Null()]),
  backlog: Type.Integer({ description: 'Stored events not yet acknowledged (PUBACK) by the broker' }),
});
export type MqttStatus = Static<typeof MqttStatus>;

export const MqttSettingsView = Type.Object({
  enabled: Type.Boolean(),
  url: Type.String(),
  client_id: Type.String(),
  username: Type.String(),
  password_set: Type.Boolean(),
  topic: Type.String(),
  tls: Type.Object({ reject_unauthorized: Type.Boolean(), ca: Type.String() }),
  status: MqttStatus,
});
export type MqttSettingsView = Static<typeof MqttSettingsView>;

export interface MqttSettings {
  enabled: boolean;
  url: string;
  client_id: string;
  username: string;
  password: string;
  topic: string;
  tls: { reject_unauthorized: boolean; ca: string };
}

const DEFAULTS: MqttSettings = {
  enabled: false,
  url: '',
  client_id: '',
  username: '',
  password: '',
  topic: DEFAULT_TOPIC,
  tls: { reject_unauthorized: true, ca: '' },
};

export function loadMqttSettings(settings: SettingsRepository): MqttSettings {
  const stored = settings.get<Partial<MqttSettings>>(KEY);
  return stored ? { ...DEFAULTS, ...stored } : DEFAULTS;
}

export function saveMqttSettings(settings: SettingsRepository, mqtt: MqttSettings): void {
  settings.set(KEY, mqtt);
}

/**
 * The stored settings with the body applied, or a 400 naming the field; nothing is saved here. The
 * stored username and password belong to the broker they were given for: a url naming another
 * broker (see sameBroker) drops them unless the body gives them again, so whoever may change the url
 * cannot have the engine send the stored password to a host of their choosing.
 */
export function mergeMqttSettings(current: MqttSettings, body: MqttSettingsBody): MqttSettings {
  const url = body.url ?? current.url;
  const kept = sameBroker(current.url, url) ? current : { username: '', password: '' };
  const next: MqttSettings = {
    enabled: body.enabled ?? current.enabled,
    url,
    // A fixed id per engine: the broker then knows a reconnecting engine as the same client.
    client_id: body.client_id ?? (current.client_id || newClientId()),
    username: body.username ?? kept.username,
    password: body.password ?? kept.password,
    topic: body.topic ?? current.topic,
    tls: {
      reject_unauthorized: body.tls?.reject_unauthorized ?? current.tls.reject_unauthorized,
      ca: body.tls?.ca ?? current.tls.ca,
    },
  };
  if (next.enabled && next.url === '') throw invalid('body.url: is required to enable MQTT');
  if (next.url !== '') checkUrl(next.url);
  checkTopic(next.topic);
  if (next.tls.ca !== '' && !next.tls.ca.includes('-----BEGIN CERTIFICATE-----'))
    throw invalid('body.tls.ca: must be PEM text with at least one "-----BEGIN CERTIFICATE-----" block');
  return next;
}

/** The settings a connection test uses: the stored ones with the body applied, which must name a broker. */
export function settingsToTest(current: MqttSettings, body: MqttSettingsBody): MqttSettings {
  const next = mergeMqttSettings(current, body);
  if (next.url === '') throw invalid('body.url: is required to test the connection');
  return next;
}

/** A client id of its own for an engine that has none yet. */
export const newClientId = () => `vision-console-${randomBytes(4).toString('hex')}`;

const DEFAULT_PORTS: Record<string, string> = { 'mqtt:': '1883', 'mqtts:': '8883' };

/**
 * Whether two broker URLs name the same broker: the same scheme (mqtts to mqtt would send the
 * password in clear), host and port (the scheme's default when none is given). A name or IPv4
 * address must be spelled the same but for case: mqtt:// hosts are opaque to URL parsing, so two
 * spellings of one address (127.0.0.1, 0x7f.1) count as two brokers, which errs on the side of
 * asking for the credentials again; IPv6 addresses are compared as URL parsing normalises them. Path,
 * query and fragment name no other broker. An unset or unparsable url is no broker at all.
 */
export function sameBroker(a: string, b: string): boolean {
  const broker = (text: string) => {
    try {
      const url = new URL(text);
      const port = url.port || DEFAULT_PORTS[url.protocol];
      return `${url.protocol}//${url.hostname.toLowerCase()}:${port}`;
    } catch {
      return undefined;
    }
  };
  const first = broker(a);
  return first !== undefined && first === broker(b);
}

function checkUrl(text: string): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('body.url: must be an absolute URL such as mqtt://127.0.0.1:1883');
  }
  if (url.protocol !== 'mqtt:' && url.protocol !== 'mqtts:')
    throw invalid(`body.url: must start with mqtt:// or mqtts://, not ${url.protocol}//`);
  if (!url.hostname) throw invalid('body.url: names no host');
  // Credentials in the URL would come back from GET; they have their own write-only fields.
  if (url.username || url.password)
    throw invalid('body.url: put the credentials in username and password, not in the URL');
}

/**
 * A topic to publish on once filled in: no wildcard (+ #, which PUBLISH may not carry), no NUL, not
 * a broker's own $ topic, and no placeholder but {task_id} and {app_id}.
 */
function checkTopic(topic: string): void {
  if (['+', '#', '\0'].some((c) => topic.includes(c)))
    throw invalid('body.topic: may not contain +, # or NUL (MQTT wildcards)');
  if (topic.startsWith('$')) throw invalid("body.topic: may not start with $ (the broker's own topics)");
  for (const [placeholder] of topic.matchAll(/\{[^}]*\}/g))
    if (!PLACEHOLDERS.has(placeholder))
      throw invalid(`body.topic: ${placeholder} is no placeholder; use {task_id} and {app_id}`);
}

/** The topic of a task's event; task-level events (app_id "") fill {app_id} with _task (app ids never start with "_"). */
export const topicOf = (template: string, taskId: string, appId: string) =>
  template.replaceAll('{task_id}', taskId).replaceAll('{app_id}', appId || '_task');

/** msg is "body.<field>: why"; the field is that path without the body root. */
const invalid = (msg: string) =>
  new DomainError<DeliveryErrorKind>('delivery.invalid_mqtt_settings', msg, {
    field: msg.slice('body.'.length, msg.indexOf(':')),
  });

export function viewOf(settings: MqttSettings, status: MqttStatus): MqttSettingsView {
  return {
    enabled: settings.enabled,
    url: settings.url,
    client_id: settings.client_id,
    username: settings.username,
    password_set: settings.password !== '',
    topic: settings.topic,
    tls: { ...settings.tls },
    status,
  };
}
