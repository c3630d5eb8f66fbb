import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { terminate } from './helpers/child';
import { startTestEngine, type TestEngine } from './helpers/engine';

/**
 * Connections cannot exhaust the engine: their number is bounded, slow or idle ones are cut, and what
 * the HTTP parser refuses is answered in the envelope. The engine runs in this process, so its open
 * descriptors are /proc/self/fd; the hostile sockets live in a child process of their own.
 */

const LIMITS = { maxConnections: 40, headersTimeoutMs: 2000, keepAliveTimeoutMs: 1000 };
// Node checks the headers timeout once a headersTimeout/4 at most; a loaded machine adds its share.
const CUT_WITHIN_MS = LIMITS.headersTimeoutMs + 3000;

let t: TestEngine;
const children: ChildProcess[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  t = await startTestEngine(undefined, undefined, { connections: LIMITS });
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const child of children.splice(0)) await terminate(child, 'SIGKILL');
});
afterAll(async () => t?.stop());

const openDescriptors = () => readdirSync('/proc/self/fd').length;

/** Sends raw bytes on a fresh connection; resolves with what came back once the engine closed it. */
function exchange(bytes: string): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const socket = connect(t.engine.port, '127.0.0.1', () => socket.write(bytes));
    sockets.push(socket);
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('close', () => resolve({ text, closedAfterMs: performance.now() - start }));
    socket.on('error', reject);
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1]);
const envelopeOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { code: number };

async function healthAnswers(): Promise<boolean> {
  try {
    const answer = await fetch(`${t.engine.url}/api/health`, { signal: AbortSignal.timeout(2000) });
    return answer.status === 200;
  } catch {
    return false;
  }
}

describe('what the HTTP parser refuses', () => {
  it('answers 431 43101 in the envelope for a 60 KB header', async () => {
    const { text } = await exchange(
      `GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(60_000)}\r\n\r\n`,
    );
    expect(statusOf(text)).toBe(431);
    expect(envelopeOf(text)).toMatchObject({ code: 43101 });
  });

  it('answers 400 40005 in the envelope for a request that is not HTTP', async () => {
    for (const bytes of [
      'HELLO\r\n\r\n',
      'GET /api/health HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n',
      'GET / HTTP/9.9\r\n\r\n',
    ]) {
      const { text } = await exchange(bytes);
      expect({ bytes, status: statusOf(text) }).toEqual({ bytes, status: 400 });
      expect(envelopeOf(text)).toMatchObject({ code: 40005 });
    }
  });
});

describe('slow and idle connections', () => {
  it('cuts a connection that trickles its headers, with 408 40801, within the headers timeout', async () => {
    const start = performance.now();
    const socket = connect(t.engine.port, '127.0.0.1');
    sockets.push(socket);
    socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 200);
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    socket.on('error', () => {});
    const closedAfterMs = await new Promise<number>((resolve) =>
      socket.on('close', () => resolve(performance.now() - start)),
    );
    clearInterval(trickle);
    expect(closedAfterMs).toBeGreaterThanOrEqual(LIMITS.headersTimeoutMs - 100);
    expect(closedAfterMs).toBeLessThan(CUT_WITHIN_MS);
    expect(statusOf(text)).toBe(408);
    expect(envelopeOf(text)).toMatchObject({ code: 40801 });
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const start = performance.now();
    const { text, closedAfterMs } = await exchange(
      'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n',
    );
    expect(statusOf(text)).toBe(200);
    expect(closedAfterMs).toBeLessThan(LIMITS.keepAliveTimeoutMs + 3000);
    expect(performance.now() - start).toBeGreaterThanOrEqual(LIMITS.keepAliveTimeoutMs - 100);
  });

  it('bounds the descriptors 400 idle sockets take, cuts them, and answers again', async () => {
    const before = openDescriptors();
    // 400 connections that never send a byte, from another process (its descriptors are its own).
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const net = require('node:net');
         let connected = 0, closed = 0;
         for (let i = 0; i < 400; i++) {
           const s = net.connect(${t.engine.port}, '127.0.0.1');
           s.resume();
           s.on('connect', () => connected++);
           s.on('close', () => closed++);
           s.on('error', () => {});
         }
         setInterval(() => console.log(JSON.stringify({ connected, closed })), 100);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    let state = { connected: 0, closed: 0 };
    child.stdout?.on('data', (chunk: Buffer) => {
      const last = chunk.toString().trim().split('\n').pop();
      if (last) state = JSON.parse(last) as typeof state;
    });

    const start = performance.now();
    let most = 0;
    while (state.closed < 400 && performance.now() - start < CUT_WITHIN_MS + 2000) {
      most = Math.max(most, openDescriptors() - before);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const allCutAfterMs = performance.now() - start;
    // Beyond the limit, connections are refused at once; the rest are cut by the headers timeout.
    expect(most).toBeLessThanOrEqual(LIMITS.maxConnections + 10);
    expect(state.closed).toBe(400);
    expect(allCutAfterMs).toBeLessThan(CUT_WITHIN_MS + 1000);
    expect(await healthAnswers()).toBe(true);
  }, 30_000);

  it('keeps a long-lived event stream open past the headers and keep-alive timeouts', async () => {
    const stream = await fetch(`${t.engine.url}/api/events/stream`, {
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body?.getReader();
    let ended = false;
    const reading = (async () => {
      for (;;) {
        const { done } = (await reader?.read()) ?? { done: true };
        if (done) break;
      }
      ended = true;
    })().catch(() => {
      ended = true;
    });
    await new Promise((resolve) =>
      setTimeout(resolve, LIMITS.headersTimeoutMs + LIMITS.keepAliveTimeoutMs + 2000),
    );
    expect(ended).toBe(false);
    await reader?.cancel();
    await reading;
  }, 20_000);
});
