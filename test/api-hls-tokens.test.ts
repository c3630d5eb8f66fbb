import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_TOKEN_PERIOD_MS, StreamTokens } from '../engine/auth/stream-tokens';
import { ManualClock } from '../engine/clock';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';

/**
 * A playlist fetched with ?token= lists its segments with a short-lived token for that one stream,
 * never the caller's 24 h API token; that token opens that stream's segments and nothing else.
 */

interface Preview {
  stream_id: string;
  hls_url: string;
}

let t: TestEngine;
let first: Preview;
let second: Preview;

async function openPreview(): Promise<Preview> {
  const answer = await t.call('POST', '/api/stream', { json: { video_url: VIDEO, device_id: 'cam' } });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ code: 0 });
  return answer.body.data as Preview;
}

/** The segment URIs of a preview's playlist fetched with the API token in the query. */
async function segments(preview: Preview): Promise<string[]> {
  const answer = await fetch(`${preview.hls_url}?token=${t.token}`);
  expect(answer.status).toBe(200);
  return (await answer.text()).split('\n').filter((line) => line.startsWith('seg'));
}

const tokenOf = (uri: string) => new URL(uri, 'http://x/').searchParams.get('token') ?? '';

async function status(url: string, headers: Record<string, string> = {}): Promise<[number, number?]> {
  const answer = await fetch(url, { headers });
  const body = answer.headers.get('content-type')?.includes('json')
    ? ((await answer.json()) as { code: number })
    : undefined;
  return body ? [answer.status, body.code] : [answer.status];
}

beforeAll(async () => {
  t = await startTestEngine();
  [first, second] = await Promise.all([openPreview(), openPreview()]);
}, 60_000);
afterAll(async () => t?.stop());

describe('HLS segment tokens', () => {
  it('are not the API token, open their own stream segments, and are stable within a period', async () => {
    const uris = await segments(first);
    expect(uris.length).toBeGreaterThan(0);
    const token = tokenOf(uris[0] as string);
    expect(token).not.toBe('');
    expect(token).not.toBe(t.token);
    for (const uri of uris) expect(uri).not.toContain(t.token);
    expect(new Set(uris.map(tokenOf))).toEqual(new Set([token]));
    const segment = await fetch(new URL(uris.at(-1) as string, first.hls_url));
    expect(segment.status).toBe(200);
    expect(segment.headers.get('content-type')).toBe('video/mp2t');
    expect((await segments(first)).map(tokenOf)).toContain(token);
  });

  it('open nothing else: not the playlist, not another stream, not any other endpoint', async () => {
    const uris = await segments(first);
    const token = tokenOf(uris[0] as string);
    const segmentName = (uris.at(-1) as string).split('?')[0] as string;
    const base = t.engine.url;
    const otherSegment = ((await segments(second)).at(-1) as string).split('?')[0] as string;
    expect(await status(`${first.hls_url}?token=${token}`)).toEqual([401, 40102]);
    expect(await status(`${base}/api/stream/${second.stream_id}/${otherSegment}?token=${token}`)).toEqual([
      401, 40102,
    ]);
    expect(
      await status(`${base}/api/stream/${first.stream_id}/${segmentName}`, {
        authorization: `Bearer ${token}`,
      }),
    ).toEqual([200]);
    expect(await status(`${base}/api/tasks`, { authorization: `Bearer ${token}` })).toEqual([401, 40102]);
    expect(await status(`${base}/api/tasks?token=${token}`)).toEqual([401, 40101]);
    expect(await status(`${base}/api/events/stream?token=${token}`)).toEqual([401, 40102]);
    expect(
      await status(
        `${base}/api/task/00000000-0000-4000-8000-000000000000/livestream/${first.stream_id}/${segmentName}?token=${token}`,
      ),
    ).toEqual([401, 40102]);
  });

  it('expire after one to two periods', async () => {
    const uris = await segments(first);
    const url = new URL(uris.at(-1) as string, first.hls_url).toString();
    t.advance(2 * STREAM_TOKEN_PERIOD_MS);
    expect(await status(url)).toEqual([401, 40102]);
  });
});

describe('StreamTokens', () => {
  it('issues the same token within a period and one valid for one to two periods', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const tokens = new StreamTokens(clock, 1000);
    const token = tokens.issue('a');
    clock.advance(999);
    expect(tokens.issue('a')).toBe(token);
    expect(tokens.verify('a', token)).toBe(true);
    expect(tokens.verify('b', token)).toBe(false);
    expect(new StreamTokens(clock, 1000).verify('a', token)).toBe(false);
    clock.advance(1000);
    expect(tokens.verify('a', token)).toBe(true);
    clock.advance(1);
    expect(tokens.verify('a', token)).toBe(false);
  });
});
