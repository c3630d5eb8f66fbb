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

const LIMITS = {
  maxConnections: 40,
  perClient: 16,
  reserved: 8,
  headersTimeoutMs: 2000,
  keepAliveTimeoutMs: 1000,
};
const OPEN_SLOTS = LIMITS.maxConnections - LIMITS.reserved;
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
function exchange(bytes: string, port = t.engine.port): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
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

/**
 * Connections from another process, each from its own loopback address (127.1.x.y: Linux routes all
 * of 127.0.0.0/8 to lo), that a closed one is opened again for, as a determined attacker does:
 * `keepalive` asks /api/health on each every 300 ms (below the keep-alive timeout); `slow` sends
 * a login whose body never completes. Reports how many are connected and how many got answers.
 */
function flood(
  port: number,
  mode: 'keepalive' | 'slow',
  count: number,
): { state: () => { open: number; answers: number } } {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const net = require('node:net');
       let open = 0, answers = 0;
       function start(i) {
         const s = net.connect({ port: ${port}, host: '127.0.0.1', localAddress: '127.1.' + (i >> 8) + '.' + ((i & 255) + 1) });
         let timer, connected = false;
         s.on('connect', () => {
           connected = true;
           open++;
           if (${JSON.stringify(mode)} === 'keepalive') {
             const ask = () => s.write('GET /api/health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n');
             ask();
             timer = setInterval(ask, 300);
           } else {
             s.write('POST /api/auth/token HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nContent-Length: 100\\r\\n\\r\\n{"user');
           }
         });
         s.on('data', (d) => { if (d.toString('latin1').startsWith('HTTP/1.1 200')) answers++; });
         s.on('error', () => {});
         s.on('close', () => {
           clearInterval(timer);
           if (connected) open--;
           setTimeout(() => start(i), 50);
         });
       }
       for (let i = 0; i < ${count}; i++) start(i);
       setInterval(() => console.log(JSON.stringify({ open, answers })), 50);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  let state = { open: 0, answers: 0 };
  child.stdout?.on('data', (chunk: Buffer) => {
    const last = chunk.toString().trim().split('\n').pop();
    if (last) state = JSON.parse(last) as typeof state;
  });
  return { state: () => state };
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A request on a new connection, as a newcomer makes it: its status, envelope code and time. */
async function newcomer(
  port: number,
  path: string,
  token?: string,
): Promise<{ status: number; code?: number; ms: number }> {
  const auth = token ? `Authorization: Bearer ${token}\r\n` : '';
  const { text, closedAfterMs } = await exchange(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Connection: close\r\n\r\n`,
    port,
  );
  const status = statusOf(text);
  return { status, code: status ? envelopeOf(text).code : undefined, ms: closedAfterMs };
}

/** One keep-alive connection that asks one request at a time; the status, or 0 once it was closed. */
async function keepAlive(port: number): Promise<{ ask(path: string, token: string): Promise<number> }> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  return {
    ask: (path, token) =>
      new Promise((resolve) => {
        const closed = () => resolve(0);
        socket.once('close', closed);
        socket.once('data', (chunk: Buffer) => {
          socket.off('close', closed);
          resolve(statusOf(chunk.toString('latin1')));
        });
        if (socket.destroyed) resolve(0);
        else
          socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      }),
  };
}

describe('all connection slots taken', () => {
  // An engine of its own whose idle keep-alive connections outlast these tests: only an eviction closes them.
  let f: TestEngine;
  beforeAll(async () => {
    f = await startTestEngine(undefined, undefined, {
      connections: { ...LIMITS, keepAliveTimeoutMs: 10_000 },
    });
  });
  afterAll(async () => f?.stop());

  it('by keep-alive requests to /api/health: a newcomer is served within 1 s, the connection idle the longest closed for it', async () => {
    const port = f.engine.port;
    // The console's own keep-alive connection, once it has shown its token, is not the one closed.
    const kept = await keepAlive(port);
    expect(await kept.ask('/api/tasks', f.token)).toBe(200);
    const attack = flood(port, 'keepalive', 2 * LIMITS.maxConnections);
    await until('the flood to hold the open slots', () => attack.state().answers >= 3 * OPEN_SLOTS);
    // Every flood connection asks every 300 ms: the console's is now the one idle the longest.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (let i = 0; i < 5; i++) {
      const anonymous = await newcomer(port, '/api/health');
      expect(anonymous).toMatchObject({ status: 200, code: 0 });
      expect(anonymous.ms).toBeLessThan(1000);
      const console = await newcomer(port, '/api/tasks', f.token);
      expect(console).toMatchObject({ status: 200, code: 0 });
      expect(console.ms).toBeLessThan(1000);
    }
    expect(await kept.ask('/api/tasks', f.token)).toBe(200);
  }, 30_000);

  it('by slow anonymous requests: a client with a token is served within 1 s, an anonymous one is told 503 50305', async () => {
    const port = f.engine.port;
    const attack = flood(port, 'slow', LIMITS.maxConnections);
    await until('the flood to hold the open slots', () => attack.state().open >= OPEN_SLOTS);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let i = 0; i < 5; i++) {
      const console = await newcomer(port, '/api/tasks', f.token);
      expect(console).toMatchObject({ status: 200, code: 0 });
      expect(console.ms).toBeLessThan(1000);
    }
    const anonymous = await newcomer(port, '/api/health');
    expect(anonymous).toMatchObject({ status: 503, code: 50305 });
  }, 30_000);

  it(`keeps at most ${LIMITS.perClient} anonymous connections of one address, closing its own idle ones first`, async () => {
    const mine: Socket[] = [];
    for (let i = 0; i < LIMITS.perClient + 10; i++) {
      const socket = connect({ port: f.engine.port, host: '127.0.0.1', localAddress: '127.0.3.1' });
      socket.on('error', () => {});
      sockets.push(socket);
      mine.push(socket);
      await new Promise((resolve) => socket.once('connect', resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const open = mine.flatMap((s, i) => (s.destroyed || s.readableEnded ? [] : [i]));
    // The newest stayed: each newcomer over the bound closed the address's oldest idle one.
    expect(open).toEqual(mine.map((_, i) => i).slice(-LIMITS.perClient));
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
