import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sameBroker } from '../engine/callbacks/mqtt-settings';
import { ERRORS } from '../engine/contract/errors';
import type { CallbackBody } from '../engine/events/schema';
import { type Answer, startTestEngine, type TestEngine } from './helpers/engine';
import { Mosquitto } from './helpers/mosquitto';
import { message, range } from './helpers/receiver';

/**
 * MQTT publishing against a real mosquitto broker started by the test (with persistence), read by a
 * separate mqtt.js subscriber with a persistent session: topics, bodies, and no QoS 1 message lost
 * across a broker restart or an engine restart while the broker is down.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'vc-mqtt-'));
let broker: Mosquitto;
let t: TestEngine;
let subscriber: MqttClient;
const received: { topic: string; body: CallbackBody }[] = [];

beforeAll(async () => {
  broker = await Mosquitto.start();
  t = await startTestEngine(dataDir);
  subscriber = await connectAsync(broker.url, {
    clientId: 'vc-test-subscriber',
    clean: false,
    reconnectPeriod: 200,
  });
  subscriber.on('message', (topic, payload) =>
    received.push({ topic, body: JSON.parse(payload.toString()) }),
  );
  await subscriber.subscribeAsync('vision/#', { qos: 1 });
});
afterAll(async () => {
  await subscriber?.endAsync(true);
  await t?.stop();
  await broker?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

function data(answer: Answer): Record<string, unknown> {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.data as Record<string, unknown>;
}

const status = async () =>
  data(await t.call('GET', '/api/settings/mqtt')).status as { connected: boolean; backlog: number };
const receivedIds = (task: string) =>
  received.filter((m) => m.body.task_id === task).map((m) => m.body.event_id);

describe('MQTT settings', () => {
  it('refuses invalid settings naming the field, and changes nothing', async () => {
    const before = data(await t.call('GET', '/api/settings/mqtt'));
    expect(before).toEqual({
      enabled: false,
      url: '',
      client_id: '',
      username: '',
      password_set: false,
      topic: 'vision/{task_id}/{app_id}',
      tls: { reject_unauthorized: true, ca: '' },
      status: { connected: false, last_error: null, backlog: 0 },
    });
    const refusals: [unknown, RegExp][] = [
      [{ enabled: true }, /body\.url: is required to enable MQTT/],
      [{ url: 'http://127.0.0.1:1883' }, /body\.url: must start with mqtt:\/\/ or mqtts:\/\//],
      [{ url: 'not a url' }, /body\.url: must be an absolute URL/],
      [{ url: 'mqtt://user:secret@127.0.0.1' }, /body\.url: put the credentials in username and password/],
      [{ tls: { ca: 'not pem' } }, /body\.tls\.ca: must be PEM/],
      [{ client_id: 'has space' }, /body\.client_id/],
      [{ enabled: 'yes' }, /body\.enabled: must be boolean/],
      [{ broker: 'x' }, /body\.broker: is not an allowed field/],
      [{}, /body: must NOT have fewer than 1 properties/],
    ];
    for (const [json, msg] of refusals) {
      const answer = await t.call('PUT', '/api/settings/mqtt', { json });
      expect({ status: answer.status, code: answer.body.code }, JSON.stringify(json)).toEqual({
        status: 400,
        code: ERRORS.INVALID_PARAMETER.code,
      });
      expect(answer.body.msg).toMatch(msg);
    }
    expect(data(await t.call('GET', '/api/settings/mqtt'))).toEqual(before);
  });
});

/** What a client's MQTT CONNECT packet says about its credentials (MQTT 3.1.1, section 3.1). */
interface Connect {
  username: string | null;
  password: string | null;
  /** Every byte the client sent, to look for the password wherever it might be. */
  raw: Buffer;
}

/**
 * A fake broker: a plain TCP server that reads each connection's CONNECT packet and never answers,
 * so the engine's client keeps reconnecting to it. Real capture of what the engine sends a host.
 */
class CapturingBroker {
  readonly connects: Connect[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<CapturingBroker> {
    const server = createServer();
    const broker = new CapturingBroker(server);
    server.on('connection', (socket) => {
      let raw = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        raw = Buffer.concat([raw, chunk]);
        const packet = parseConnect(raw);
        if (packet) {
          broker.connects.push(packet);
          socket.destroy();
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return broker;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  close(): Promise<void> {
    return new Promise((done) => this.server.close(() => done()));
  }
}

/** The CONNECT packet at the start of `raw` once it is whole, else null. */
function parseConnect(raw: Buffer): Connect | null {
  if (raw.length < 2) return null;
  expect(raw[0], 'the first packet is a CONNECT').toBe(0x10);
  let length = 0;
  let at = 1;
  for (let shift = 0; ; shift += 7) {
    const byte = raw[at++];
    if (byte === undefined) return null;
    length += (byte & 0x7f) << shift;
    if (!(byte & 0x80)) break;
  }
  if (raw.length < at + length) return null;
  const text = () => {
    const size = raw.readUInt16BE(at);
    const value = raw.toString('utf8', at + 2, at + 2 + size);
    at += 2 + size;
    return value;
  };
  expect(text()).toBe('MQTT');
  const level = raw[at];
  const flags = raw[at + 1] as number;
  expect(level, 'MQTT 3.1.1').toBe(4);
  at += 4; // level, flags, keep-alive
  text(); // client id
  if (flags & 0x04) {
    text(); // will topic
    text(); // will message
  }
  const username = flags & 0x80 ? text() : null;
  const password = flags & 0x40 ? text() : null;
  return { username, password, raw: Buffer.from(raw) };
}

describe('MQTT retarget', () => {
  it('counts scheme, host and port as the broker; path, host case and a default port spelled out do not', () => {
    expect(sameBroker('mqtt://broker.lan', 'mqtt://BROKER.lan:1883/')).toBe(true);
    expect(sameBroker('mqtts://broker.lan', 'mqtts://broker.lan:8883')).toBe(true);
    expect(sameBroker('mqtt://[::1]:1883', 'mqtt://[0:0:0:0:0:0:0:1]')).toBe(true);
    // Other spellings of one address are other brokers: the credentials are asked for again.
    expect(sameBroker('mqtt://127.0.0.1', 'mqtt://0x7f.1')).toBe(false);
    expect(sameBroker('mqtt://broker.lan', 'mqtt://other.lan')).toBe(false);
    expect(sameBroker('mqtt://broker.lan', 'mqtt://broker.lan:1884')).toBe(false);
    expect(sameBroker('mqtts://broker.lan:1883', 'mqtt://broker.lan:1883')).toBe(false);
    expect(sameBroker('', 'mqtt://broker.lan')).toBe(false);
  });

  it('sends the stored credentials only to the broker they were given for', async () => {
    const first = await CapturingBroker.start();
    const second = await CapturingBroker.start();
    const third = await CapturingBroker.start();
    try {
      const put = async (json: unknown) => data(await t.call('PUT', '/api/settings/mqtt', { json }));
      // Given with the first broker: it gets them (the capture sees credentials when they are sent).
      await put({ enabled: true, url: first.url, username: 'engine', password: 'first-secret' });
      await until('a CONNECT at the first broker', () => first.connects.length > 0);
      expect(first.connects[0]).toMatchObject({ username: 'engine', password: 'first-secret' });
      // Other fields changed, same broker spelled otherwise: the credentials stay.
      await put({ client_id: 'vc-retarget', url: `${first.url}/` });
      const seen = first.connects.length;
      await until('a CONNECT after the change', () => first.connects.length > seen);
      expect(first.connects.at(-1)).toMatchObject({ username: 'engine', password: 'first-secret' });

      // Only the url changes: the new host gets no credentials at all, and none are stored any more.
      const moved = await put({ url: second.url });
      expect(moved).toMatchObject({ url: second.url, username: '', password_set: false });
      await until('two CONNECTs at the second broker', () => second.connects.length >= 2);
      for (const connect of second.connects) {
        expect(connect).toMatchObject({ username: null, password: null });
        expect(connect.raw.includes('first-secret')).toBe(false);
        expect(connect.raw.includes('engine')).toBe(false);
      }
      // Moving back does not bring them back either.
      await put({ url: first.url });
      expect(data(await t.call('GET', '/api/settings/mqtt'))).toMatchObject({ password_set: false });

      // A new host with its own credentials in the same request gets those.
      await put({ url: third.url, username: 'third-user', password: 'third-secret' });
      await until('a CONNECT at the third broker', () => third.connects.length > 0);
      expect(third.connects[0]).toMatchObject({ username: 'third-user', password: 'third-secret' });
    } finally {
      await t.call('PUT', '/api/settings/mqtt', { json: { enabled: false, url: '' } });
      await Promise.all([first.close(), second.close(), third.close()]);
    }
  });

  it('connects to a real broker with the credentials given beside a new url', async () => {
    data(
      await t.call('PUT', '/api/settings/mqtt', {
        json: { enabled: true, url: broker.url, username: 'engine', password: 'real-secret' },
      }),
    );
    await until('connected to mosquitto', async () => (await status()).connected);
    expect(data(await t.call('GET', '/api/settings/mqtt'))).toMatchObject({
      url: broker.url,
      username: 'engine',
      password_set: true,
    });
    data(await t.call('PUT', '/api/settings/mqtt', { json: { enabled: false, url: '' } }));
  });
});

describe('publishing', () => {
  it('publishes each stored event QoS 1 on vision/<task_id>/<app_id>, task-level events on _task', async () => {
    const task = randomUUID();
    // Stored while MQTT is off: history is not published when it is switched on.
    const history = t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, 0));

    const view = data(
      await t.call('PUT', '/api/settings/mqtt', {
        json: {
          enabled: true,
          url: broker.url,
          client_id: 'vc-engine-test',
          username: 'engine',
          password: 'pw-1',
        },
      }),
    );
    expect(view).toMatchObject({
      enabled: true,
      url: broker.url,
      client_id: 'vc-engine-test',
      password_set: true,
    });
    expect(view).not.toHaveProperty('password');
    expect(JSON.stringify(data(await t.call('GET', '/api/settings/mqtt')))).not.toContain('pw-1');
    await until('the engine connected', async () => (await status()).connected);

    const sent = [
      t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, 1, 8, 'person')),
      t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, 2, 8, 'vehicle')),
      t.engine.outbox.enqueue(
        { task_id: task, report_url: '' },
        {
          event: 'stream_lost',
          task_id: task,
          app_id: '',
          business_id: 'gate-a',
          timestamp: t.clock.now(),
          data: { status: 'stream_lost', dump: 'stream lost: EOF' },
        },
      ),
    ];
    await until('3 messages', () => receivedIds(task).length === 3);
    const got = received.filter((m) => m.body.task_id === task);
    expect(got.map((m) => m.topic)).toEqual([
      `vision/${task}/person`,
      `vision/${task}/vehicle`,
      `vision/${task}/_task`,
    ]);
    expect(got.map((m) => m.body)).toEqual(sent);
    expect(receivedIds(task)).not.toContain(history.event_id);
    await until('backlog 0', async () => (await status()).backlog === 0);
  });

  it('loses no QoS 1 message across a broker restart', async () => {
    const task = randomUUID();
    const enqueue = (i: number) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, i));
    const before = range(1, 20).map(enqueue);
    await until('the first 20', () => receivedIds(task).length >= 20);

    await broker.stop();
    await until('the engine noticed', async () => !(await status()).connected);
    const during = range(21, 40).map(enqueue);
    expect((await status()).backlog).toBe(20);
    await broker.restart();
    const after = range(41, 60).map(enqueue);

    const all = [...before, ...during, ...after];
    await until('all 60 after the restart', () => new Set(receivedIds(task)).size === 60);
    const seqs = received.filter((m) => m.body.task_id === task).map((m) => m.body.seq);
    expect([...new Set(seqs)]).toEqual(range(1, 60));
    expect(new Set(receivedIds(task))).toEqual(new Set(all.map((b) => b.event_id)));
    await until('backlog 0', async () => (await status()).backlog === 0);
  });

  it('publishes what was stored while the broker was down after an engine restart too', async () => {
    const task = randomUUID();
    await broker.stop();
    const stored = range(1, 10).map((i) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, i)),
    );
    await t.engine.close();
    await broker.restart();
    t = await startTestEngine(dataDir);
    await until('the 10 stored while both were down', () => new Set(receivedIds(task)).size === 10);
    expect(new Set(receivedIds(task))).toEqual(new Set(stored.map((b) => b.event_id)));
    expect(data(await t.call('GET', '/api/settings/mqtt'))).toMatchObject({
      enabled: true,
      password_set: true,
    });
  });

  it('switching MQTT off stops publishing and forgets its backlog', async () => {
    const view = data(await t.call('PUT', '/api/settings/mqtt', { json: { enabled: false } }));
    expect(view).toMatchObject({ enabled: false, url: broker.url, status: { connected: false, backlog: 0 } });
    const task = randomUUID();
    const quiet = t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, 1));
    // A marker published after re-enabling shows the subscriber is caught up, without the quiet event.
    data(await t.call('PUT', '/api/settings/mqtt', { json: { enabled: true } }));
    await until('reconnected', async () => (await status()).connected);
    const marker = t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, 2));
    await until('the marker', () => receivedIds(task).includes(marker.event_id));
    expect(receivedIds(task)).toEqual([marker.event_id]);
    expect(receivedIds(task)).not.toContain(quiet.event_id);
  });
});
