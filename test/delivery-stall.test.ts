import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { callbackAgent, postCallback } from '../engine/callbacks/post';
import { systemClock } from '../engine/clock';
import { EventBus } from '../engine/events/bus';
import type { EventItem } from '../engine/events/delivery';
import { openDb } from '../engine/store/db';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { message, Receiver, range } from './helpers/receiver';

/**
 * Receivers that accept the connection and never answer, beside a healthy one, with the engine in a
 * process of its own that collects garbage every 20 ms (--expose-gc): every attempt must still end at
 * the request timeout (10 s, the engine's default) and be retried with backoff, and the stuck
 * receivers must never hold up the healthy one's events.
 */

const PASSWORD = 'stall-test-password';
const REQUEST_TIMEOUT_MS = 10_000;
const GC_PRESSURE = resolve(import.meta.dirname, 'helpers/gc-pressure.ts');
/**
 * Least time between two requests to a receiver that never answers: the second may only start once
 * the first was cut off. Less than the timeout, as a request is stamped when the receiver has read
 * it, a little after the engine started its clock (more so on a loaded machine); a second request
 * beside the first would come within milliseconds.
 */
const CUT_OFF_GAP_MS = REQUEST_TIMEOUT_MS - 2_000;

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function receiver(mode: Receiver['mode']): Promise<Receiver> {
  const rx = await Receiver.start();
  rx.mode = mode;
  cleanup.push(() => rx.close());
  return rx;
}

/** Stores the events before the engine starts, so that delivery begins with all of them pending. */
function storeBacklog(dataDir: string, tasks: { task: string; url: string; events: number }[]): void {
  const db = openDb(dataDir);
  const outbox = new Outbox(
    new OutboxRepository(db),
    { listedTaskIds: () => [] },
    systemClock,
    new EventBus(),
  );
  for (const { task, url, events } of tasks)
    for (const i of range(1, events)) outbox.enqueue({ task_id: task, report_url: url }, message(task, i));
  db.close();
}

async function engineUnderGc(dataDir: string): Promise<EngineProcess> {
  const engine = await spawnEngine(dataDir, PASSWORD, [], ['--expose-gc', '--import', GC_PRESSURE]);
  cleanup.push(() => stopEngine(engine));
  return engine;
}

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vc-stall-'));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A raw TCP receiver: it accepts connections and then does what `serve` does with each socket. */
async function tcpReceiver(serve: (socket: Socket) => void): Promise<string> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    serve(socket);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanup.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((done) => server.close(done));
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/callback`;
}

describe('the deadline of one attempt', () => {
  it('holds in every phase while the garbage collector runs every few milliseconds', async () => {
    // This worker was not started with --expose-gc; V8 can still be told so, for this test's collections.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const collecting = setInterval(gc, 10);
    cleanup.push(async () => clearInterval(collecting));

    const silent = await tcpReceiver(() => {});
    const trickling = await tcpReceiver((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n');
      // A byte every 100 ms: never idle long enough for an idle timeout, never finished.
      const drip = setInterval(() => socket.write('1\r\n \r\n'), 100);
      socket.on('close', () => clearInterval(drip));
    });
    const timeoutMs = 1_000;
    const dispatcher = callbackAgent({ timeoutMs: 60_000, perReceiver: 8 });
    cleanup.push(() => dispatcher.destroy());
    for (const url of [silent, trickling]) {
      const started = performance.now();
      const outcome = await postCallback({
        url,
        json: '{}',
        secret: '',
        now: Date.now(),
        timeoutMs,
        stop: new AbortController().signal,
        // The pool's own phase timeouts are far off: the attempt's deadline alone must end it.
        dispatcher,
      });
      const took = performance.now() - started;
      expect(outcome).toMatchObject({ ok: false, http_status: null, timed_out: true });
      expect(outcome.error).toBe(`no answer within ${timeoutMs} ms`);
      expect(took).toBeGreaterThanOrEqual(timeoutMs - 5);
      expect(took).toBeLessThan(timeoutMs + 5_000);
    }
  }, 30_000);
});

describe('hanging receivers under forced garbage collection', () => {
  it('a hanging receiver beside a healthy one: its attempts end at the request timeout and are retried', async () => {
    const dir = dataDir();
    const hanging = await receiver({ kind: 'hang' });
    const healthy = await receiver({ kind: 'ok' });
    const stuckTask = randomUUID();
    const tasks = [randomUUID(), randomUUID()];
    storeBacklog(dir, [
      { task: stuckTask, url: hanging.url, events: 2 },
      ...tasks.map((task) => ({ task, url: healthy.url, events: 10 })),
    ]);
    const engine = await engineUnderGc(dir);

    await healthy.waitFor('the healthy tasks’ 20 events', () => healthy.accepted.length === 20);
    for (const task of tasks)
      expect(healthy.accepted.filter((r) => r.task_id === task).map((r) => r.seq)).toEqual(range(1, 10));

    // Collections every 20 ms for the whole timeout: the first attempt must still be cut off.
    await hanging.waitFor('a second attempt of the stuck event', () => hanging.requests.length >= 2, 60_000);
    const [first, second] = hanging.requests;
    expect(first?.outcome).toBe('aborted');
    expect([first?.seq, second?.seq]).toEqual([1, 1]);
    const gap = (second?.receivedAt ?? 0) - (first?.receivedAt ?? 0);
    expect(gap).toBeGreaterThanOrEqual(CUT_OFF_GAP_MS);
    // Timeout plus the first backoff (1 s +-20 %), with room for a loaded machine.
    expect(gap).toBeLessThan(REQUEST_TIMEOUT_MS + 10_000);

    const token = await signIn(engine.url, PASSWORD);
    const page = await callApi<{ items: EventItem[] }>(
      engine.url,
      token,
      'GET',
      `/api/task/${stuckTask}/events`,
    );
    expect(page.items.map((e) => [e.seq, e.state])).toEqual([
      [1, 'pending'],
      [2, 'pending'],
    ]);
    expect(page.items[0]).toMatchObject({
      http_status: null,
      last_error: `no answer within ${REQUEST_TIMEOUT_MS} ms`,
    });
    expect(page.items[0]?.attempts).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('many hanging receivers beside a healthy one: the healthy events go promptly', async () => {
    const dir = dataDir();
    // 6 receivers x 8 tasks could hold every one of the 32 shared slots if nothing stopped them.
    const hanging = await Promise.all(range(1, 6).map(() => receiver({ kind: 'hang' })));
    const healthy = await receiver({ kind: 'ok' });
    const tasks = range(1, 3).map(() => randomUUID());
    storeBacklog(dir, [
      ...hanging.flatMap((rx) => range(1, 8).map(() => ({ task: randomUUID(), url: rx.url, events: 1 }))),
      ...tasks.map((task) => ({ task, url: healthy.url, events: 20 })),
    ]);
    await engineUnderGc(dir);

    await healthy.waitFor('the healthy tasks’ 60 events', () => healthy.accepted.length === 60, 60_000);
    for (const task of tasks)
      expect(healthy.accepted.filter((r) => r.task_id === task).map((r) => r.seq)).toEqual(range(1, 20));
    // Promptly: well inside one request timeout, which is what waiting for a stuck slot would cost.
    const times = healthy.accepted.map((r) => r.receivedAt);
    expect(Math.max(...times) - Math.min(...times)).toBeLessThan(REQUEST_TIMEOUT_MS / 2);

    // Each stuck receiver is probed by one request at a time, cut off at the timeout, then tried again.
    for (const [i, rx] of hanging.entries()) {
      await rx.waitFor(`a second attempt at hanging receiver ${i}`, () => rx.requests.length >= 2, 60_000);
      const [first, second] = rx.requests;
      expect(first?.outcome).toBe('aborted');
      expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(CUT_OFF_GAP_MS);
    }
  }, 120_000);
});
