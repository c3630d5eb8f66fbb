import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageResult } from '../engine/events/schema';
import { type SiteEngine, siteOf, startSite, stopSite } from './helpers/cluster-engines';
import { settled } from './helpers/eventually';
import { FIXTURES } from './helpers/fixtures';
import { NatsCluster } from './helpers/nats-cluster';

// Two engines on one real NATS server: the routes a NATS message cannot carry (uploads, video,
// zips) asked of the node that does not run the task are proxied to the one that does, over HTTP.
let nats: NatsCluster;
let engines: SiteEngine[];
let owner: SiteEngine;
let other: SiteEngine;
let taskId: string;
const PNG = readFileSync(join(FIXTURES, 'media', 'basketball1.png'));

interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

async function ask<T>(engine: SiteEngine, path: string, init: RequestInit & { token?: string } = {}) {
  const answer = await fetch(`${engine.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${init.token ?? owner.token}`, ...init.headers },
    signal: AbortSignal.timeout(20_000),
  });
  return {
    status: answer.status,
    node: answer.headers.get('x-vc-node'),
    body: (await answer.json()) as Envelope<T>,
  };
}

beforeAll(async () => {
  nats = await NatsCluster.start(1);
  engines = await startSite(nats, 2);
  [owner, other] = engines as [SiteEngine, SiteEngine];
  const started = await owner.call<{ task_id: string }>('POST', '/api/task', {
    mode: 'image',
    zapk_id: 'builtin',
    app_ids: ['motion'],
  });
  taskId = started.task_id;
  await settled('the task assigned in the site', async () => {
    const site = await siteOf(other);
    if (site.assignments[taskId]?.node !== owner.name) throw new Error('not assigned yet');
    return site;
  });
}, 90_000);

afterAll(async () => {
  await stopSite(engines ?? []);
  await nats?.dispose();
});

describe("a task's uploads, from any node", () => {
  it('proxies a raw image upload to the owner, with the token the site shares', async () => {
    const answer = await ask<ImageResult>(other, `/api/task/${taskId}/image`, {
      method: 'POST',
      headers: { 'content-type': 'image/png' },
      body: PNG,
    });
    expect([answer.status, answer.body.code, answer.node]).toEqual([200, 0, owner.name]);
    expect(answer.body.data.frame).toMatchObject({ width: 640, height: 480 });
  });

  it('proxies a multipart upload as a stream, and the owner counts both uploads', async () => {
    // The 1 s rule of image tasks holds across nodes: it is the owner's.
    await new Promise((done) => setTimeout(done, 1_100));
    const form = new FormData();
    form.append('image', new Blob([PNG], { type: 'image/png' }), 'frame.png');
    const answer = await ask<ImageResult>(other, `/api/task/${taskId}/image`, { method: 'POST', body: form });
    expect([answer.status, answer.body.code, answer.node]).toEqual([200, 0, owner.name]);
    const view = await owner.call<{ health: { images: number } }>('GET', `/api/task/${taskId}`);
    expect(view.health).toMatchObject({ images: 2 });
  });

  it('answers a request another node proxied where it lands: never sent on', async () => {
    const answer = await ask(other, `/api/task/${taskId}/image`, {
      method: 'POST',
      headers: { 'content-type': 'image/png', 'x-vc-proxied': '1' },
      body: PNG,
    });
    expect([answer.status, answer.body.code]).toEqual([404, 40401]);
  });

  it('says the owner did not answer when it hangs, rather than hang with it', async () => {
    // Frozen, its kernel still accepts the connection: only the proxy's time limit ends the wait.
    owner.signal('SIGSTOP');
    try {
      const answer = await ask(other, `/api/task/${taskId}/image`, {
        method: 'POST',
        headers: { 'content-type': 'image/png' },
        body: PNG,
      });
      expect([answer.status, answer.body.code]).toEqual([503, 50307]);
      expect(answer.body.msg).toContain(`runs on node ${owner.name}, which did not answer`);
    } finally {
      owner.signal('SIGCONT');
    }
  }, 30_000);
});
