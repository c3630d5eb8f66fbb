import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_TOKEN_LIFETIME_S } from '../engine/auth/accounts';
import { ADMIN_PASSWORD, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';

/**
 * A token's long-lived answers end with the token: the SSE feed and the video WebSockets it opened
 * close within a second of signing out or of a password change, and at the token's expiry on the
 * engine's clock; other tokens' streams go on. Real HTTP, a real preview (ffmpeg) on the socket.
 */

const WITHIN_MS = 1000;

let t: TestEngine;
let streamId: string;
const open: { close(): void }[] = [];

beforeAll(async () => {
  t = await startTestEngine();
  const answer = await t.call('POST', '/api/stream', { json: { video_url: VIDEO } });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ code: 0 });
  streamId = (answer.body.data as { stream_id: string }).stream_id;
}, 60_000);
afterAll(async () => {
  for (const stream of open) stream.close();
  await t?.stop();
});

/** An open stream as its client sees it: when it ended, and how (a socket's close code and reason). */
interface Watched {
  endedAt: number | null;
  code?: number;
  reason?: string;
}

async function feed(token: string): Promise<Watched> {
  const abort = new AbortController();
  const response = await fetch(`${t.engine.url}/api/events/stream?token=${token}`, { signal: abort.signal });
  expect(response.status).toBe(200);
  const watched: Watched = { endedAt: null };
  const reader = response.body?.getReader();
  void (async () => {
    try {
      while (!(await reader?.read())?.done);
    } catch {
      // Cut off, or aborted by the test: ended either way.
    }
    watched.endedAt = performance.now();
  })();
  open.push({ close: () => abort.abort() });
  return watched;
}

/** A preview's socket once its first fragment has arrived. */
async function socket(token: string): Promise<Watched> {
  const ws = new WebSocket(
    `${t.engine.url.replace(/^http/, 'ws')}/api/stream/${streamId}/socket?token=${encodeURIComponent(token)}`,
  );
  open.push({ close: () => ws.terminate() });
  const watched: Watched = { endedAt: null };
  ws.on('close', (code, reason) =>
    Object.assign(watched, { endedAt: performance.now(), code, reason: `${reason}` }),
  );
  ws.on('error', () => {});
  await new Promise<void>((done, fail) => {
    ws.once('message', () => done());
    ws.once('close', (code, reason) => fail(new Error(`socket closed before any video: ${code} ${reason}`)));
    setTimeout(() => fail(new Error('no video on the socket within 30 s')), 30_000);
  });
  return watched;
}

async function endedWithin(streams: Watched[], since: number): Promise<number[]> {
  const deadline = since + 5000;
  while (streams.some((s) => s.endedAt === null) && performance.now() < deadline)
    await new Promise((done) => setTimeout(done, 10));
  return streams.map((s) => (s.endedAt === null ? Number.POSITIVE_INFINITY : s.endedAt - since));
}

const issue = () => t.engine.issueToken().access_token;

describe('streams end with the token that opened them', () => {
  it('signing out ends that token’s feed and socket within 1 s, and no other token’s', async () => {
    const [leaving, staying] = [issue(), issue()];
    const streams = [await feed(leaving), await socket(leaving)];
    const others = [await feed(staying), await socket(staying)];
    const start = performance.now();
    const answer = await t.call('POST', '/api/auth/logout', { token: leaving });
    expect(answer.body.code).toBe(0);
    const after = await endedWithin(streams, start);
    expect(
      after.every((ms) => ms < WITHIN_MS),
      `ended after ${after.map(Math.round)} ms`,
    ).toBe(true);
    expect(streams[1]).toMatchObject({ code: 4401, reason: 'the token was revoked; sign in again' });
    // The other token's streams go on: the socket still gets video.
    await new Promise((done) => setTimeout(done, 300));
    expect(others.map((s) => s.endedAt)).toEqual([null, null]);
    expect((await t.call('GET', '/api/tasks', { token: staying })).body.code).toBe(0);
  }, 60_000);

  it('a password change ends the streams of every token of the user within 1 s', async () => {
    const [one, two] = [issue(), issue()];
    const streams = [await feed(one), await socket(one), await feed(two), await socket(two)];
    const start = performance.now();
    const answer = await t.call('PUT', '/api/auth/password', {
      token: one,
      json: { current_password: ADMIN_PASSWORD, password: 'a-new-password-31' },
    });
    expect(answer.body.code).toBe(0);
    const after = await endedWithin(streams, start);
    expect(
      after.every((ms) => ms < WITHIN_MS),
      `ended after ${after.map(Math.round)} ms`,
    ).toBe(true);
    expect([streams[1]?.code, streams[3]?.code]).toEqual([4401, 4401]);
  }, 60_000);

  it('a token’s expiry on the engine’s clock ends its streams, not before', async () => {
    const token = issue();
    const streams = [await feed(token), await socket(token)];
    t.clock.advance(DEFAULT_TOKEN_LIFETIME_S * 1000 - 1000);
    await new Promise((done) => setTimeout(done, 300));
    expect(streams.map((s) => s.endedAt)).toEqual([null, null]);
    const start = performance.now();
    t.clock.advance(1000);
    const after = await endedWithin(streams, start);
    expect(
      after.every((ms) => ms < WITHIN_MS),
      `ended after ${after.map(Math.round)} ms`,
    ).toBe(true);
    expect(streams[1]).toMatchObject({ code: 4401, reason: 'the token expired; get a new one' });
  }, 60_000);
});
