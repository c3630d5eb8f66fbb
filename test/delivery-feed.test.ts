import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { wireTaskEvents } from '../engine/callbacks/task-events';
import { ManualClock } from '../engine/clock';
import { ERRORS } from '../engine/contract/errors';
import { EventBus, type StoredEvent } from '../engine/events/bus';
import type { DeliveryRecord } from '../engine/events/delivery';
import { MAX_FEEDS } from '../engine/events/feed';
import { CallbackBody } from '../engine/events/schema';
import { compileCheck } from '../engine/schema/ajv';
import { openDb } from '../engine/store/db';
import { restingHealth } from '../engine/tasks/health-view';
import type { TaskEvents } from '../engine/tasks/registry';
import type { TaskView } from '../engine/tasks/schema';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { FeedClient } from './helpers/feed-client';
import { message, Receiver, range } from './helpers/receiver';

/**
 * The console's live feed: the in-process bus (what the desktop forwards over IPC) and the SSE
 * endpoint over real HTTP, with its ?token= auth, task filter and Last-Event-ID replay; and the
 * task registry's stream events turned into delivered events.
 */

const checkBody = compileCheck<CallbackBody>(CallbackBody, 'body');
let t: TestEngine;
let rx: Receiver;
const feeds: FeedClient[] = [];

beforeAll(async () => {
  t = await startTestEngine();
  rx = await Receiver.start();
});
afterAll(async () => {
  for (const feed of feeds) feed.close();
  await t?.stop();
  await rx?.close();
});

async function feed(query: string, headers: Record<string, string> = {}, pauseMs = 0): Promise<FeedClient> {
  const client = await FeedClient.open(`${t.engine.url}/api/events/stream${query}`, headers, pauseMs);
  feeds.push(client);
  return client;
}

/**
 * A feed read straight off its socket, which reads nothing until read() is called: then everything
 * the engine sent, byte for byte, until the engine closed the connection.
 */
function rawFeed(path: string): { answered: Promise<void>; read(): Promise<string> } {
  const socket = connect(t.engine.port, '127.0.0.1');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  const chunks: Buffer[] = [];
  const closed = new Promise<void>((done) => socket.once('close', () => done()));
  socket.on('error', () => {});
  const answered = new Promise<void>((done) =>
    socket.once('data', (chunk: Buffer) => {
      chunks.push(chunk);
      socket.pause();
      done();
    }),
  );
  return {
    answered,
    async read() {
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.resume();
      await closed;
      return Buffer.concat(chunks).toString('latin1');
    },
  };
}

/** The ids of the callback events a raw feed's text holds whole (the last one may be cut short). */
const completeEventIds = (text: string) =>
  [...text.matchAll(/^id: (\d+)\nevent: callback\ndata: [^\n]*\n\n/gm)].map((m) => Number(m[1]));

describe('the in-process bus', () => {
  it('carries each stored event with its JSON as sent, then its delivery changes', async () => {
    const stored: StoredEvent[] = [];
    const changes: DeliveryRecord[] = [];
    const onEvent = (event: StoredEvent) => stored.push(event);
    const onDelivery = (record: DeliveryRecord) => changes.push(record);
    t.engine.bus.on('event', onEvent);
    t.engine.bus.on('delivery', onDelivery);
    try {
      const task = randomUUID();
      const body = t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, message(task, 1));
      expect(stored).toHaveLength(1);
      expect(stored[0]?.body).toEqual(body);
      expect(stored[0]?.json).toBe(JSON.stringify(body));
      expect(stored[0]?.delivery).toMatchObject({
        event_id: body.event_id,
        seq: 1,
        state: 'pending',
        attempts: 0,
      });
      await rx.waitFor('delivery', () => rx.accepted.some((r) => r.event_id === body.event_id));
      await new Promise((done) => setTimeout(done, 20));
      expect(changes.filter((c) => c.event_id === body.event_id).map((c) => c.state)).toEqual(['delivered']);
    } finally {
      t.engine.bus.off('event', onEvent);
      t.engine.bus.off('delivery', onDelivery);
    }
  });

  it('a throwing listener neither fails the enqueue nor stops delivery', async () => {
    const broken = () => {
      throw new Error('a broken console view');
    };
    t.engine.bus.on('event', broken);
    try {
      const task = randomUUID();
      const body = t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, message(task, 1));
      await rx.waitFor('delivery despite the listener', () =>
        rx.accepted.some((r) => r.event_id === body.event_id),
      );
    } finally {
      t.engine.bus.off('event', broken);
    }
  });
});

describe('GET /api/events/stream', () => {
  it('streams a task’s events and delivery changes, with ?token= for EventSource', async () => {
    const [task, other] = [randomUUID(), randomUUID()];
    const client = await feed(`?token=${t.token}&task_id=${task}`);
    expect(client.status).toBe(200);
    const bodies = range(1, 3).map((i) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, message(task, i)),
    );
    t.engine.outbox.enqueue({ task_id: other, report_url: '' }, message(other, 1));
    await client.until(
      '3 callbacks and 3 deliveries',
      () => client.callbacks().length === 3 && client.deliveries().length === 3,
    );
    const callbacks = client.callbacks();
    expect(callbacks.map((c) => c.body)).toEqual(bodies);
    for (const c of callbacks) expect(checkBody(c.body).ok).toBe(true);
    expect(callbacks.map((c) => c.id)).toEqual([...callbacks.map((c) => c.id)].sort((a, b) => a - b));
    expect(client.deliveries().map((d) => [d.seq, d.state, d.http_status])).toEqual([
      [1, 'delivered', 200],
      [2, 'delivered', 200],
      [3, 'delivered', 200],
    ]);
    expect(client.frames.every((f) => !f.data?.includes(other))).toBe(true);
  });

  it('replays what a reconnecting console missed after its Last-Event-ID', async () => {
    const task = randomUUID();
    const bodies = range(1, 4).map((i) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, i)),
    );
    const all = await feed(`?task_id=${task}&last_event_id=0`, { authorization: `Bearer ${t.token}` });
    await all.until('the 4 stored', () => all.callbacks().length === 4);
    const secondId = all.callbacks()[1]?.id;
    const resumed = await feed(`?token=${t.token}&task_id=${task}`, { 'last-event-id': String(secondId) });
    await resumed.until('the 2 after it', () => resumed.callbacks().length === 2);
    expect(resumed.callbacks().map((c) => c.body)).toEqual(bodies.slice(2));
    const fifth = t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, 5));
    await resumed.until('the live one', () => resumed.callbacks().length === 3);
    expect(resumed.callbacks()[2]?.body).toEqual(fifth);
  });

  it('refuses a missing or bad token with the envelope; ?token= works for this endpoint only', async () => {
    const missing = await feed('');
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body)).toMatchObject({ code: ERRORS.MISSING_TOKEN.code });
    const bad = await feed('?token=not-a-token');
    expect(bad.status).toBe(401);
    expect(JSON.parse(bad.body)).toMatchObject({ code: ERRORS.INVALID_TOKEN.code });
    const unknown = await feed(`?token=${t.token}&since=1`);
    expect(JSON.parse(unknown.body)).toMatchObject({
      code: ERRORS.INVALID_PARAMETER.code,
      msg: 'query.since: is not an allowed field',
    });
    const elsewhere = await fetch(`${t.engine.url}/api/tasks?token=${t.token}`);
    expect(elsewhere.status).toBe(401);
    expect(await elsewhere.json()).toMatchObject({ code: ERRORS.MISSING_TOKEN.code });
  });

  it('cuts off a console that does not read, which then catches up through Last-Event-ID', async () => {
    const task = randomUUID();
    const stalled = rawFeed(`/api/events/stream?token=${t.token}&task_id=${task}`);
    await stalled.answered;
    // 24 events of 1 MB while the console reads nothing: far more than the 1 MiB it may fall behind.
    const bodies = range(1, 24).map((i) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, i, 1024 * 1024)),
    );
    // The engine closed the connection; the console now reads what had reached it.
    const text = await stalled.read();
    const ids = completeEventIds(text);
    expect(ids.length).toBeLessThan(24);
    expect(ids).toEqual(range(0, ids.length - 1).map((i) => (ids[0] ?? 0) + i));
    const resumed = await feed(`?token=${t.token}&task_id=${task}&last_event_id=${ids.at(-1) ?? 0}`);
    await resumed.until('the rest', () => resumed.callbacks().length === 24 - ids.length);
    expect(resumed.callbacks().map((c) => c.body.seq)).toEqual(bodies.slice(ids.length).map((b) => b.seq));
  });

  it('replays at the pace of a console that reads slowly, without cutting it off', async () => {
    const task = randomUUID();
    // 24 MB stored: a replay written at once would put the console 23 MB behind.
    const bodies = range(1, 24).map((i) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, i, 1024 * 1024)),
    );
    const slow = await feed(`?token=${t.token}&task_id=${task}&last_event_id=0`, {}, 5);
    await slow.until('all 24 replayed', () => slow.callbacks().length === 24 || slow.ended, 60_000);
    expect(slow.ended).toBe(false);
    expect(slow.callbacks().map((c) => c.body.seq)).toEqual(bodies.map((b) => b.seq));
    const live = t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, 25));
    await slow.until('the live one after the replay', () => slow.callbacks().length === 25);
    expect(slow.callbacks()[24]?.body).toEqual(live);
  }, 90_000);

  it('ends open streams when the engine stops', async () => {
    const other = await startTestEngine();
    const client = await FeedClient.open(`${other.engine.url}/api/events/stream?token=${other.token}`);
    feeds.push(client);
    expect(client.status).toBe(200);
    await other.stop();
    await client.until('the stream ended', () => client.ended);
  });
});

describe('how many feeds the engine serves', () => {
  it(`refuses a feed beyond ${MAX_FEEDS} with 503 50306 and Retry-After, and serves one again once a feed ends`, async () => {
    const other = await startTestEngine();
    try {
      const url = `${other.engine.url}/api/events/stream?token=${other.token}`;
      const open = await Promise.all(range(1, MAX_FEEDS).map(() => FeedClient.open(url)));
      feeds.push(...open);
      expect(open.map((f) => f.status)).toEqual(open.map(() => 200));
      const refused = await fetch(url);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toMatchObject({ code: ERRORS.FEEDS_BUSY.code });
      open[0]?.close();
      await new Promise((done) => setTimeout(done, 200));
      const next = await FeedClient.open(url);
      feeds.push(next);
      expect(next.status).toBe(200);
    } finally {
      await other.stop();
    }
  });
});

describe('task stream events', () => {
  it('turns the registry’s stream_lost and stream_restored into delivered events on app_id ""', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-task-events-'));
    const db = openDb(dir);
    const outbox = new Outbox(
      new OutboxRepository(db),
      { listedTaskIds: () => [] },
      new ManualClock(),
      new EventBus(),
    );
    try {
      const registry = new EventEmitter<TaskEvents>();
      const errors: unknown[] = [];
      const unwire = wireTaskEvents(registry, outbox, new ManualClock(5000), {
        secretOf: () => 'secret-of-the-task-123',
        onError: (error) => errors.push(error),
      });
      const view: TaskView = {
        task_id: randomUUID(),
        name: 'gate',
        mode: 'video',
        analysis_fps: 10,
        priority: 50,
        persistent: true,
        motion_gate: true,
        gate_regions: false,
        gpu: 'none',
        rule_overrides: {},
        zapk_id: 'builtin',
        app_ids: ['motion'],
        device_id: 'cam-1',
        business_id: 'yard',
        video_url: 'rtsp://127.0.0.1/cam',
        analysis_url: null,
        report_url: 'http://127.0.0.1:9/callback',
        osd: {},
        close_code: 0,
        dump: 'stream lost: EOF; reconnecting (0 reconnects so far)',
        health: { ...restingHealth(0), events_refused: 0, stream_lost_since: 1500 },
        status: 'stream_lost',
        app_configs: [],
        created_at: 1000,
        closed_at: null,
      };
      registry.emit('stream_lost', view);
      registry.emit('stream_restored', { ...view, status: 'running', dump: 'running' });
      registry.emit('closed', {
        ...view,
        status: 'closed',
        close_code: 2,
        dump: 'closed: the video stream was not restored within 5 min',
      });
      unwire();
      registry.emit('stream_lost', view);

      const page = outbox.list(view.task_id, { after_seq: 0, limit: 10, with_body: true });
      const bodies = page?.items.map((item) => item.body);
      expect(bodies?.map((b) => checkBody(b).ok)).toEqual([true, true, true]);
      expect(bodies?.map((b) => [b?.event, b?.seq, b?.app_id, b?.timestamp, b?.business_id])).toEqual([
        ['stream_lost', 1, '', 5000, 'yard'],
        ['stream_restored', 2, '', 5000, 'yard'],
        ['task_closed', 3, '', 5000, 'yard'],
      ]);
      expect(bodies?.map((b) => b?.data)).toEqual([
        { status: 'stream_lost', dump: view.dump },
        { status: 'running', dump: 'running' },
        { close_code: 2, status: 'closed', dump: 'closed: the video stream was not restored within 5 min' },
      ]);
      expect(page?.items.map((item) => item.state)).toEqual(['pending', 'pending', 'pending']);
      expect(errors).toEqual([]);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
