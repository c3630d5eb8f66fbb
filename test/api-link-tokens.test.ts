import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_TOKEN_PERIOD_MS } from '../engine/auth/stream-tokens';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';

/**
 * Pictures and downloads a page links to (<img src>, download links) take a short-lived link token
 * in ?token=, minted by POST /api/auth/link for one resource's scope, and never the 24 h API token,
 * which browsers keep in their history and proxies in their logs.
 */

let t: TestEngine;
let first: string;
let second: string;

const startVideo = async () => {
  const answer = await t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO },
  });
  expect(answer.body.code, answer.body.msg).toBe(0);
  return (answer.body.data as { task_id: string }).task_id;
};

interface Links {
  links: { path: string; url: string }[];
  expires_in: number;
}

async function mint(paths: string[]): Promise<Links> {
  const answer = await t.call('POST', '/api/auth/link', { json: { paths } });
  expect(answer.body.code, answer.body.msg).toBe(0);
  return answer.body.data as Links;
}

/** Status and envelope code (when JSON) of a GET without any Authorization header. */
async function open(url: string): Promise<[number, number?]> {
  const answer = await fetch(`${t.engine.url}${url}`);
  const json = answer.headers.get('content-type')?.includes('json');
  return json ? [answer.status, ((await answer.json()) as { code: number }).code] : [answer.status];
}

const tokenOf = (url: string) => new URL(url, 'http://x/').searchParams.get('token') ?? '';

beforeAll(async () => {
  t = await startTestEngine();
  [first, second] = [await startVideo(), await startVideo()];
}, 60_000);
afterAll(async () => t?.stop());

describe('link tokens', () => {
  it("are minted for a resource's path, keep its query, and open it without a header", async () => {
    const minted = await mint([`/api/task/${first}/snapshot?width=160`, `/api/task/${first}/heatmap`]);
    expect(minted.expires_in).toBeGreaterThanOrEqual(STREAM_TOKEN_PERIOD_MS / 1000);
    expect(minted.expires_in).toBeLessThanOrEqual((2 * STREAM_TOKEN_PERIOD_MS) / 1000);
    const [snapshot, heatmap] = minted.links;
    expect(snapshot?.url).toMatch(new RegExp(`^/api/task/${first}/snapshot\\?width=160&token=`));
    expect(tokenOf(snapshot?.url ?? '')).not.toBe(t.token);
    expect(await open(snapshot?.url ?? '')).toEqual([200]);
    expect(await open(heatmap?.url ?? '')).toEqual([200]);
  }, 30_000);

  it('open nothing but their own resource: not another task, an alarm, a run, or any API call', async () => {
    const token = tokenOf((await mint([`/api/task/${first}/snapshot`])).links[0]?.url ?? '');
    // The same task's other picture is in its scope.
    expect(await open(`/api/task/${first}/heatmap?token=${token}`)).toEqual([200]);
    for (const elsewhere of [
      `/api/task/${second}/snapshot`,
      `/api/task/${second}/heatmap`,
      '/api/alarms/00000000-0000-4000-8000-000000000000/thumbnail',
      `/api/task/${first}/optimization/o1/export`,
    ])
      expect(await open(`${elsewhere}?token=${token}`), elsewhere).toEqual([401, 40102]);
    // Not an API token: no route takes it in the header, and a route without links not in the query.
    const header = await fetch(`${t.engine.url}/api/tasks`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(header.status).toBe(401);
    expect(await open(`/api/tasks?token=${token}`)).toEqual([401, 40101]);
  }, 30_000);

  it('expire after 5 to 10 minutes', async () => {
    const url = (await mint([`/api/task/${first}/snapshot`])).links[0]?.url ?? '';
    t.advance(STREAM_TOKEN_PERIOD_MS);
    expect(await open(url)).toEqual([200]);
    t.advance(STREAM_TOKEN_PERIOD_MS);
    expect(await open(url)).toEqual([401, 40102]);
  }, 30_000);

  it('are the only token a link takes: the API token in ?token= is refused, in the header it works', async () => {
    for (const path of [
      `/api/task/${first}/snapshot`,
      '/api/alarms/00000000-0000-4000-8000-000000000000/snapshot',
      `/api/task/${first}/optimization/o1/samples/1/image`,
    ])
      expect(await open(`${path}?token=${t.token}`), path).toEqual([401, 40102]);
    const header = await fetch(`${t.engine.url}/api/task/${first}/snapshot`, {
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(header.status).toBe(200);
  }, 30_000);

  it('are minted only for pictures and downloads, and only with the API token', async () => {
    const refused = await t.call('POST', '/api/auth/link', {
      json: { paths: [`/api/task/${first}/snapshot`, '/api/tasks'] },
    });
    expect(refused.body).toMatchObject({ code: 40001, field: 'paths[1]' });
    const token = tokenOf((await mint([`/api/task/${first}/snapshot`])).links[0]?.url ?? '');
    const withLink = await t.call('POST', '/api/auth/link', {
      token,
      json: { paths: [`/api/task/${second}/snapshot`] },
    });
    expect(withLink.status).toBe(401);
  });
});
