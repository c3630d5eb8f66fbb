import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../engine/api/errors';
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
