import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HeldEvents } from '../engine/callbacks/held-events';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { ManualClock, systemClock } from '../engine/clock';
import { EventBus } from '../engine/events/bus';
import type { EventItem } from '../engine/events/delivery';
import { openDb } from '../engine/store/db';
import { ffmpegChildrenOf } from './helpers/child';
import { type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { eventually } from './helpers/eventually';
import { VIDEO } from './helpers/fixtures';
import { message, Receiver, range } from './helpers/receiver';
import { SmallDisk } from './helpers/small-disk';

/**
 * The engine's data dir on a small disk that fills up while a video task runs and delivers to a
 * receiver (a tmpfs; where mounting is not permitted, SQLite's page limit, see SmallDisk). The
 * engine, in a process of its own, must not crash; API writes answer 507 (50701) and change
 * nothing; reads answer; new events wait in memory and delivery pauses; what was stored stays
 * intact; all of it is stored and delivered once space is freed; and the engine starts on a full disk.
 */

const PASSWORD = 'disk-full-password';
const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

interface Answer {
  status: number;
  code: number;
  data: unknown;
}

interface Backlog {
  pending: number;
  held_events: number;
  lost_events: number;
  unrecorded_attempts: number;
}

async function request(
  engine: EngineProcess,
  token: string,
  method: string,
  path: string,
  json?: unknown,
): Promise<Answer> {
  const response = await fetch(`${engine.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: json === undefined ? null : JSON.stringify(json),
  });
  const body = (await response.json()) as { code: number; data: unknown };
  return { status: response.status, code: body.code, data: body.data };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A task body whose row needs several new database pages: a 256-point polygon and long texts. */
function bigTask(reportUrl: string, video?: string) {
  const polygon = range(0, 255).map((i) => {
    const angle = (2 * Math.PI * i) / 256;
    return [Math.round(400 + 300 * Math.cos(angle)), Math.round(300 + 250 * Math.sin(angle))];
  });
  return {
    ...(video ? { video_url: video } : { mode: 'image' }),
    zapk_id: 'builtin',
    app_ids: ['motion'],
    app_configs: [{ app_id: 'motion', polygon }],
    business_id: 'b'.repeat(256),
    device_id: 'd'.repeat(256),
    report_url: `${reportUrl}?${'q'.repeat(1800)}`,
  };
}

describe('a full data disk', () => {
  it('answers 507, keeps what is stored, pauses what needs space and resumes when space returns', async () => {
    const disk = SmallDisk.create(64);
    cleanup.push(() => disk.dispose());
    const rx = await Receiver.start();
    cleanup.push(() => rx.close());
    const engine: EngineProcess = await spawnEngine(disk.dataDir, PASSWORD, [], disk.nodeArgs);
    cleanup.push(() => stopEngine(engine));
    const token = await signIn(engine.url, PASSWORD);
    const call = (method: string, path: string, json?: unknown) => request(engine, token, method, path, json);
    const backlog = async () => (await call('GET', '/api/events/backlog')).data as Backlog;
    const taskIds = async () =>
      ((await call('GET', '/api/tasks')).data as { task_id: string }[]).map((t) => t.task_id).sort();
    const events = async (taskId: string) => {
      const answer = await call('GET', `/api/task/${taskId}/events?with_body=true&limit=500`);
      expect(answer.status).toBe(200);
      return (answer.data as { items: EventItem[] }).items;
    };
    const expectDiskFull = (answer: Answer) => expect([answer.status, answer.code]).toEqual([507, 50701]);

    // One motion event a second, each with a snapshot of about 110 KB. The receiver takes 2 s per
    // answer: events pile up pending and an attempt is in flight when the disk fills.
    expect((await call('PUT', '/api/zapk/builtin/app/motion', { rule: { interval: 1 } })).code).toBe(0);
    rx.mode = { kind: 'slow', ms: 2000 };
    const started = await call('POST', '/api/task', {
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
      report_url: rx.url,
    });
    expect(started.code).toBe(0);
    const taskId = (started.data as { task_id: string }).task_id;
    await rx.waitFor('2 deliveries', () => rx.accepted.length >= 2, 60_000);

    disk.fill();
    await eventually('events held in memory', async () => (await backlog()).held_events >= 2);
    // The answer of the attempt in flight could not be recorded: delivery waits for space.
    await eventually('an unrecorded attempt', async () => (await backlog()).unrecorded_attempts >= 1);
    const sent = rx.requests.length;
    await sleep(3000);
    expect(rx.requests.length).toBe(sent);
    const storedBeforeFree = await events(taskId);
    expect(storedBeforeFree.length).toBeGreaterThanOrEqual(2);

    // Writes are refused with the envelope and change nothing; reads answer. A video task is not
    // stored, and its analysis, started to check the source, does not go on either.
    const before = await taskIds();
    expect(ffmpegChildrenOf(engine.child.pid as number).length).toBe(1);
    expectDiskFull(await call('POST', '/api/task', bigTask(rx.url)));
    expectDiskFull(await call('POST', '/api/task', bigTask(rx.url, VIDEO)));
    expect(await taskIds()).toEqual(before);
    expect(ffmpegChildrenOf(engine.child.pid as number).length).toBe(1);
    if (disk.mode === 'tmpfs') {
      // Closing needs a write too. (Under the page limit a small in-place update still fits.)
      expectDiskFull(await call('DELETE', `/api/task/${taskId}`));
      expect((await call('GET', `/api/task/${taskId}`)).data).toMatchObject({ status: 'running' });
      expect(ffmpegChildrenOf(engine.child.pid as number).length).toBe(1);
    }
    expect((await call('GET', `/api/task/${taskId}`)).status).toBe(200);
    expect(engine.child.exitCode).toBeNull();

    // Space again: the held events are stored, delivery goes on, and the backlog drains.
    disk.free();
    rx.mode = { kind: 'ok' };
    await eventually('the held events stored and the attempts recorded', async () => {
      const now = await backlog();
      return now.held_events === 0 && now.unrecorded_attempts === 0;
    });
    expect((await call('DELETE', `/api/task/${taskId}`)).code).toBe(0);
    await eventually('an empty backlog', async () => (await backlog()).pending === 0, 120_000);
    expect(await backlog()).toMatchObject({ pending: 0, held_events: 0, lost_events: 0 });
    const stored = await events(taskId);
    // Every event was stored, in order and without a gap, and delivered; none changed.
    expect(stored.map((e) => e.seq)).toEqual(range(1, stored.length));
    expect(stored.every((e) => e.state === 'delivered')).toBe(true);
    expect(stored.slice(0, storedBeforeFree.length).map((e) => [e.event_id, e.body])).toEqual(
      storedBeforeFree.map((e) => [e.event_id, e.body]),
    );
    const received = new Set(rx.accepted.map((r) => r.event_id));
    expect(stored.filter((e) => !received.has(e.event_id))).toEqual([]);
    expect(stored.length).toBeGreaterThan(storedBeforeFree.length);

    // Stopping on a full disk stops cleanly too.
    disk.fill();
    await stopEngine(engine);
    expect(engine.child.exitCode).toBe(0);
  }, 300_000);

  it('starts on a full disk after a clean stop: reads answer, writes are refused until space returns', async () => {
    const disk = SmallDisk.create(64);
    cleanup.push(() => disk.dispose());
    // Events stored before the first start, for a task without a receiver.
    const taskId = randomUUID();
    const db = openDb(disk.dataDir);
    const outbox = new Outbox(
      new OutboxRepository(db),
      { listedTaskIds: () => [] },
      systemClock,
      new EventBus(),
    );
    for (const i of range(1, 5))
      outbox.enqueue({ task_id: taskId, report_url: '' }, message(taskId, i, 4000));
    db.close();

    let engine = await spawnEngine(disk.dataDir, PASSWORD, [], disk.nodeArgs);
    cleanup.push(() => stopEngine(engine));
    const token = await signIn(engine.url, PASSWORD);
    const call = (method: string, path: string, json?: unknown) => request(engine, token, method, path, json);
    const stored = (await call('GET', `/api/task/${taskId}/events?with_body=true`)).data;
    expect((stored as { items: EventItem[] }).items.map((e) => e.seq)).toEqual(range(1, 5));
    await stopEngine(engine);

    // The database was closed cleanly (no WAL left): opening it needs room the disk no longer has.
    disk.fill();
    engine = await spawnEngine(disk.dataDir, PASSWORD, [], disk.nodeArgs);
    // What the engine's reserve gave back to open goes too.
    disk.fill();
    expect(await call('GET', `/api/task/${taskId}/events?with_body=true`)).toEqual({
      status: 200,
      code: 0,
      data: stored,
    });
    expect((await call('GET', '/api/tasks')).data).toEqual([]);
    expect(await call('POST', '/api/task', bigTask('http://127.0.0.1:9/callback'))).toMatchObject({
      status: 507,
      code: 50701,
    });
    expect((await call('GET', '/api/tasks')).data).toEqual([]);
    await stopEngine(engine);
    expect(engine.child.exitCode).toBe(0);

    disk.free();
    engine = await spawnEngine(disk.dataDir, PASSWORD, [], disk.nodeArgs);
    expect(await call('POST', '/api/task', bigTask('http://127.0.0.1:9/callback'))).toMatchObject({
      status: 200,
      code: 0,
    });
  }, 120_000);
});

describe('the memory hold for events', () => {
  it('keeps events in order while the database is full, loses (and counts) what does not fit, stores the rest later', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-held-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = openDb(dir);
    const clock = new ManualClock();
    const outbox = new Outbox(new OutboxRepository(db), { listedTaskIds: () => [] }, clock, new EventBus());
    cleanup.push(() => {
      db.close();
    });
    const held = new HeldEvents(outbox, clock, { heldLimitBytes: 10_000, diskRetryMs: 1000 });
    const task = randomUUID();
    const target = { task_id: task, report_url: '' };
    const seqs = () => outbox.list(task, { after_seq: 0, limit: 100, with_body: true })?.items ?? [];

    held.enqueue(target, message(task, 1, 4000));
    // A real SQLITE_FULL: this connection may not grow the database any more.
    db.pragma('max_page_count = 1');
    for (const frame of [2, 3, 4]) held.enqueue(target, message(task, frame, 4000));
    expect(held.held.events).toBe(2);
    expect(held.held.bytes).toBeLessThanOrEqual(10_000);
    expect(held.lost).toBe(1);
    clock.advance(1000);
    expect(held.held.events).toBe(2);

    db.pragma('max_page_count = 4294967294');
    clock.advance(1000);
    expect(held.held).toEqual({ events: 0, bytes: 0 });
    const stored = seqs();
    expect(stored.map((e) => e.seq)).toEqual([1, 2, 3]);
    // The event that did not fit was the last one: frames 1, 2 and 3 are stored, in order.
    expect(stored.map((e) => (e.body?.event === 'message' ? e.body.data.frame.id : 0))).toEqual([1, 2, 3]);
    held.enqueue(target, message(task, 5, 4000));
    expect(seqs().map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });
});
