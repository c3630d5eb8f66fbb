import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, startTestEngine, type TestEngine } from './helpers/engine';
import { Mosquitto } from './helpers/mosquitto';
import { freePort } from './helpers/rtmp-source';

/**
 * The MQTT topic template and "test connection" (extensions) against real mosquitto brokers: one
 * open, one that knows a single user. A connection test says connected, refused (nothing listens),
 * bad credentials, or unreachable, and saves nothing; the template decides where events go.
 */

let open: Mosquitto;
let guarded: Mosquitto;
let t: TestEngine;
let subscriber: MqttClient;
const received: { topic: string; body: { task_id: string; event: string } }[] = [];

beforeAll(async () => {
  [open, guarded] = await Promise.all([
    Mosquitto.start(),
    Mosquitto.start({ users: { engine: 'right-password' } }),
  ]);
  t = await startTestEngine(mkdtempSync(join(tmpdir(), 'vc-mqtt-test-')));
  subscriber = await connectAsync(open.url, { clientId: 'vc-topic-subscriber', reconnectPeriod: 200 });
  subscriber.on('message', (topic, payload) =>
    received.push({ topic, body: JSON.parse(payload.toString()) }),
  );
  await subscriber.subscribeAsync('#', { qos: 1 });
});
afterAll(async () => {
  await subscriber?.endAsync(true);
  await t?.stop();
  await Promise.all([open?.dispose(), guarded?.dispose()]);
});

function data(answer: Answer): Record<string, unknown> {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.data as Record<string, unknown>;
}

const test = async (json: unknown) => data(await t.call('POST', '/api/settings/mqtt/test', { json }));

describe('MQTT test connection', () => {
  it('says connected, refused, bad credentials or unreachable, and saves nothing', async () => {
    const before = data(await t.call('GET', '/api/settings/mqtt'));
    expect(await test({ url: open.url })).toMatchObject({ ok: true, outcome: 'connected', detail: null });
    expect(await test({ url: guarded.url, username: 'engine', password: 'right-password' })).toMatchObject({
      ok: true,
      outcome: 'connected',
    });
    const wrong = await test({ url: guarded.url, username: 'engine', password: 'wrong-password' });
    expect(wrong).toMatchObject({ ok: false, outcome: 'bad_credentials' });
    expect(String(wrong.detail)).toMatch(/Bad username or password|Not authorized/);
    expect(await test({ url: guarded.url })).toMatchObject({ ok: false, outcome: 'bad_credentials' });
    const closed = await freePort();
    expect(await test({ url: `mqtt://127.0.0.1:${closed}` })).toMatchObject({
      ok: false,
      outcome: 'refused',
    });
    expect(await test({ url: 'mqtt://no-such-host.invalid:1883' })).toMatchObject({
      ok: false,
      outcome: 'unreachable',
    });
    // The tests changed nothing: not the settings, not the publisher's state.
    expect(data(await t.call('GET', '/api/settings/mqtt'))).toEqual(before);
  });

  it('uses the stored password for the same broker, and refuses what PUT refuses', async () => {
    data(
      await t.call('PUT', '/api/settings/mqtt', {
        json: { url: guarded.url, username: 'engine', password: 'right-password' },
      }),
    );
    // The form sends the url and user as shown; the stored password serves.
    expect(await test({ url: guarded.url, username: 'engine' })).toMatchObject({ outcome: 'connected' });
    for (const [json, msg] of [
      [{ url: 'http://127.0.0.1:1883' }, /body\.url: must start with mqtt:\/\//],
      [{ url: '' }, /body\.url: is required to test the connection/],
      [{ topic: 'a/#' }, /body\.topic: may not contain/],
      [{}, /body: must NOT have fewer than 1 properties/],
    ] as const) {
      const answer = await t.call('POST', '/api/settings/mqtt/test', { json });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 40001 });
      expect(answer.body.msg).toMatch(msg);
    }
    data(await t.call('PUT', '/api/settings/mqtt', { json: { url: '', username: '', password: '' } }));
  });
});

describe('MQTT topic template', () => {
  it('refuses wildcards, $ topics and unknown placeholders, changing nothing', async () => {
    const before = data(await t.call('GET', '/api/settings/mqtt'));
    expect(before.topic).toBe('vision/{task_id}/{app_id}');
    for (const [topic, msg] of [
      ['site/+/x', /may not contain \+, # or NUL/],
      ['site/#', /may not contain \+, # or NUL/],
      ['a\u0000b', /may not contain \+, # or NUL/],
      ['$SYS/x', /may not start with \$/],
      ['site/{device}/{app_id}', /\{device\} is no placeholder/],
      ['', /body\.topic: must NOT have fewer than 1 characters/],
      ['x'.repeat(257), /body\.topic: must NOT have more than 256 characters/],
    ] as const) {
      const answer = await t.call('PUT', '/api/settings/mqtt', { json: { topic } });
      expect(answer.body.code, topic).toBe(40001);
      expect(answer.body.msg).toMatch(msg);
    }
    expect(data(await t.call('GET', '/api/settings/mqtt'))).toEqual(before);
  });

  it('publishes on the template with the task and app filled in', async () => {
    const view = data(
      await t.call('PUT', '/api/settings/mqtt', {
        json: { enabled: true, url: open.url, topic: 'plant-7/cameras/{task_id}/{app_id}' },
      }),
    );
    expect(view.topic).toBe('plant-7/cameras/{task_id}/{app_id}');
    const started = data(
      await t.call('POST', '/api/task', { json: { mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] } }),
    ) as { task_id: string };
    data(await t.call('DELETE', `/api/task/${started.task_id}`));
    const deadline = Date.now() + 20_000;
    while (!received.some((m) => m.body.task_id === started.task_id) && Date.now() < deadline)
      await new Promise((done) => setTimeout(done, 50));
    expect(
      received.filter((m) => m.body.task_id === started.task_id).map((m) => [m.topic, m.body.event]),
    ).toEqual([[`plant-7/cameras/${started.task_id}/_task`, 'task_closed']]);
  });
});
