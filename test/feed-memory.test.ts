import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_FEED_BUFFER, MAX_FEEDS } from '../engine/events/feed';
import { terminate } from './helpers/child';
import type { EnqueueRequest } from './helpers/feed-engine';
import { killAbove, MB, memoryOf } from './helpers/process-memory';

/**
 * Consoles that open the event feed and never read cost the engine a bounded amount of memory: at
 * most MAX_FEEDS feeds, each cut off once MAX_FEED_BUFFER behind, live events shared among them and
 * replays paced by the reader. 40 such clients (half replaying 40 MB of stored events, half live)
 * while 40 MB of events arrive: the engine process's resident memory grows by less than the bound
 * docs/security.md states. The engine without these bounds grew by about 16 MiB a client.
 */

const CLIENTS = 40;
const EVENTS = 40;
const EVENT_BYTES = 1024 * 1024;
// docs/security.md: each feed holds at most MAX_FEED_BUFFER plus the event being written.
const STATED_BOUND = MAX_FEEDS * (MAX_FEED_BUFFER + EVENT_BYTES);
// What the engine's heap itself adds while it stores 40 MB of events (measured without clients: +11 MB).
const HEAP_SLACK = 32 * MB;

const dataDir = mkdtempSync(join(tmpdir(), 'vc-feed-memory-'));
let engine: ChildProcess | undefined;
const sockets: Socket[] = [];

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await terminate(engine, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

function startEngine(): Promise<{ child: ChildProcess; url: string; token: string }> {
  const child = fork(resolve(import.meta.dirname, 'helpers/feed-engine.ts'), [dataDir], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  engine = child;
  return new Promise((done, fail) => {
    child.once('message', (m: { url: string; token: string }) => done({ child, ...m }));
    child.once('exit', (code) => fail(new Error(`the engine exited with ${code}`)));
  });
}

function enqueue(child: ChildProcess, request: Omit<EnqueueRequest, 'type'>): Promise<void> {
  return new Promise((done, fail) => {
    const exited = (code: number | null, signal: string | null) =>
      fail(new Error(`the engine exited (${code ?? signal}) while storing events`));
    child.once('exit', exited);
    child.once('message', () => {
      child.off('exit', exited);
      done();
    });
    child.send({ type: 'enqueue', ...request });
  });
}

/** A feed client that reads the status line, then nothing more; resolves with the status (0: none came). */
function stalledFeed(url: string, path: string): Promise<number> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  sockets.push(socket);
  socket.on('error', () => {});
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  return new Promise((done) => {
    socket.once('close', () => done(0));
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      done(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1]));
    });
  });
}

const settle = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('feeds that never read', () => {
  it(`cost at most ${MAX_FEEDS} feeds x (${MAX_FEED_BUFFER / MB} MiB + an event) of memory`, async () => {
    const { child, url, token } = await startEngine();
    const pid = child.pid as number;
    const guard = killAbove(child, memoryOf(pid).rss + 1500 * MB);
    try {
      const task = randomUUID();
      // Stored events to replay, and a first round of storing for the heap to grow to what it needs.
      await enqueue(child, { taskId: task, count: EVENTS, bytes: EVENT_BYTES });
      await settle(2000);
      const before = memoryOf(pid).rss;

      const statuses = await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) =>
          stalledFeed(url, `/api/events/stream?token=${token}${i % 2 ? '&last_event_id=0' : ''}`),
        ),
      );
      let most = memoryOf(pid).rss;
      const sampler = setInterval(() => {
        if (child.exitCode === null) most = Math.max(most, memoryOf(pid).rss);
      }, 20);
      for (let i = 0; i < EVENTS / 4; i++)
        await enqueue(child, { taskId: task, count: 4, bytes: EVENT_BYTES });
      await settle(3000);
      clearInterval(sampler);

      const grew = most - before;
      console.info(
        `${CLIENTS} stalled feeds (${statuses.filter((s) => s === 200).length} served): engine RSS ${Math.round(before / MB)} MB -> at most ${Math.round(most / MB)} MB (+${Math.round(grew / MB)} MB; stated bound ${Math.round(STATED_BOUND / MB)} MB)`,
      );
      expect(guard.killed).toBeNull();
      expect(grew).toBeLessThan(STATED_BOUND + HEAP_SLACK);
      expect(statuses.filter((s) => s === 200)).toHaveLength(MAX_FEEDS);
      expect(statuses.filter((s) => s === 503)).toHaveLength(CLIENTS - MAX_FEEDS);
    } finally {
      guard.stop();
    }
  }, 120_000);
});
