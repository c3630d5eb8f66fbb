import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileCheck } from '../engine/schema/ajv';
import { TaskSummary } from '../engine/tasks/schema';
import { fileCamera, SiteEngine, siteOf, stopSite } from './helpers/cluster-engines';
import { settled } from './helpers/eventually';
import { NatsCluster } from './helpers/nats-cluster';

/*
 * GET /api/tasks of a site: one real NATS server, two engine processes joined through the CLI. e1
 * takes one camera at most (cluster.max_cameras in its settings.json), so when e2 is killed its
 * cameras have nowhere to go and stay assigned to it: the listing must still show them, as the site
 * stored them, saying that their node did not answer.
 */

let nats: NatsCluster;
let e1: SiteEngine;
let e2: SiteEngine;
/** Started in this order: A on e1, B and C on e2, D on e2 and closed (and E, purged, not listed). */
const ids: Record<'a' | 'b' | 'c' | 'd', string> = { a: '', b: '', c: '', d: '' };

const ADVERTISED = 'http://node-two.example:8080';

type Listed = TaskSummary & { app_configs?: unknown[] };
const checkSummary = compileCheck<TaskSummary>(TaskSummary, 'task');

async function list(engine: SiteEngine, query = '') {
  const answer = await fetch(`${engine.url}/api/tasks${query}`, {
    headers: { authorization: `Bearer ${engine.token}` },
    signal: AbortSignal.timeout(15_000),
  });
  const envelope = (await answer.json()) as { code: number; data: Listed[] };
  expect(envelope.code).toBe(0);
  return {
    items: envelope.data,
    total: Number(answer.headers.get('x-total-count')),
    link: answer.headers.get('link'),
  };
}

/** A region for the motion app: the listing with areas carries it. */
const TRIANGLE = [
  [10, 10],
  [300, 10],
  [300, 200],
];

const camera = (engine: SiteEngine, name: string) =>
  fileCamera(engine, name, { app_configs: [{ app_id: 'motion', polygon: TRIANGLE }] });

beforeAll(async () => {
  nats = await NatsCluster.start(1);
  const dir = (name: string, settings: object) => {
    const path = mkdtempSync(join(tmpdir(), `vc-site-${name}-`));
    writeFileSync(join(path, 'settings.json'), JSON.stringify(settings));
    return path;
  };
  e1 = new SiteEngine('e1', dir('e1', { cluster: { max_cameras: 1 } }), nats.urls);
  // e2 advertises a DNS name (the other nodes' consoles send the operator there): it answers to it.
  e2 = new SiteEngine('e2', dir('e2', { cluster: { advertise_url: ADVERTISED } }), nats.urls);
  await e1.start();
  await e2.start();
  ids.a = (await camera(e1, 'cam-a')).task_id;
  ids.b = (await camera(e2, 'cam-b')).task_id;
  ids.c = (await camera(e2, 'cam-c')).task_id;
  ids.d = (await camera(e2, 'cam-d')).task_id;
  await e2.call('DELETE', `/api/task/${ids.d}`);
  // E is closed and purged: it leaves the site's listing as it leaves its node's.
  const e = (await camera(e2, 'cam-e')).task_id;
  await e2.call('DELETE', `/api/task/${e}`);
  await e2.call('DELETE', `/api/task/${e}?purge=true`);
  // Both nodes know every assignment (the closed task has none).
  for (const engine of [e1, e2])
    await settled(`${engine.name} seeing the site`, async () => {
      const site = await siteOf(engine);
      if (site.nodes.length < 2 || Object.keys(site.assignments).length < 3)
        throw new Error(JSON.stringify(site));
      return site;
    });
}, 180_000);

afterAll(async () => {
  if (e1 && e2) await stopSite([e1, e2]);
  await nats?.dispose();
});

describe('GET /api/tasks on a node of a site', () => {
  it('lists every task of the site from either node, with its node and its live health', async () => {
    for (const asked of [e1, e2]) {
      const listing = await settled(`${asked.name} listing every camera analysing`, async () => {
        const page = await list(asked);
        const running = page.items.filter((task) => task.status === 'running');
        if (
          page.total !== 4 ||
          running.length < 3 ||
          running.some((task) => task.health.frames_analysed === 0)
        )
          throw new Error(JSON.stringify(page.items.map((task) => [task.name, task.status])));
        return page;
      });
      expect(listing.total).toBe(4);
      expect(listing.link).toBeNull();
      // Oldest first, as on a single workstation; each with the node that runs it.
      expect(
        listing.items.map(({ task_id, name, status, node }) => ({ task_id, name, status, node })),
      ).toEqual([
        { task_id: ids.a, name: 'cam-a', status: 'running', node: 'e1' },
        { task_id: ids.b, name: 'cam-b', status: 'running', node: 'e2' },
        { task_id: ids.c, name: 'cam-c', status: 'running', node: 'e2' },
        { task_id: ids.d, name: 'cam-d', status: 'closed', node: null },
      ]);
      for (const task of listing.items) {
        // The contract's fields, and the extensions, nothing else; no areas unless asked for.
        expect(checkSummary(task)).toEqual({ ok: true, value: task });
        expect(Object.keys(task).filter((key) => !(key in TaskSummary.properties))).toEqual([]);
      }
      // A task of the other node answered by that node: live figures, its stream running there.
      const remote = listing.items.find((task) => task.node !== asked.name && task.status === 'running');
      expect(remote?.node_answered).toBe(true);
      expect(remote?.health.stream?.state).toBe('running');
      expect(remote?.health.analysed_fps).toBeGreaterThan(0);
    }
  }, 90_000);

  it('pages and filters the site as the contract says', async () => {
    const first = await list(e1, '?limit=3');
    expect(first.items.map((task) => task.task_id)).toEqual([ids.a, ids.b, ids.c]);
    expect(first.total).toBe(4);
    expect(first.link).toBe('</api/tasks?limit=3&offset=3>; rel="next"');
    const second = await list(e1, '?limit=3&offset=3');
    expect(second.items.map((task) => task.task_id)).toEqual([ids.d]);
    expect(second.link).toBeNull();
    const running = await list(e1, '?state=running&limit=1&offset=1');
    expect([running.items.map((task) => task.task_id), running.total]).toEqual([[ids.b], 3]);
    const closed = await list(e1, '?state=closed');
    expect(closed.items.map(({ task_id, close_code, node }) => ({ task_id, close_code, node }))).toEqual([
      { task_id: ids.d, close_code: 1, node: null },
    ]);
    expect((await list(e1, '?mode=image')).total).toBe(0);
    const withAreas = await list(e1, '?with_areas=true&limit=2&offset=1');
    expect(withAreas.items.map((task) => [task.task_id, task.app_configs?.length])).toEqual([
      [ids.b, 1],
      [ids.c, 1],
    ]);
    const refused = await fetch(`${e1.url}/api/tasks?limit=101`, {
      headers: { authorization: `Bearer ${e1.token}` },
    });
    expect([refused.status, ((await refused.json()) as { code: number }).code]).toEqual([400, 40001]);
  }, 60_000);

  it("gives the leader's placement verdict from either node: losing e2 leaves its cameras nowhere", async () => {
    for (const asked of [e1, e2]) {
      const site = await settled(`${asked.name} with the verdict`, async () => {
        const seen = await siteOf(asked);
        if (!seen.placement || seen.placement.headroom.cameras < 2) throw new Error(JSON.stringify(seen));
        return seen;
      });
      const { ok, node, cameras, would_unplace } = site.placement?.headroom ?? {};
      expect({ ok, node, cameras, would_unplace }).toEqual({
        ok: false,
        node: 'e2',
        cameras: 2,
        would_unplace: 2,
      });
    }
  }, 60_000);

  it('answers to the name it advertises, as to one the operator listed; to no other', async () => {
    const status = (host: string) =>
      new Promise<number>((done, fail) => {
        const { hostname, port } = new URL(e2.url);
        request({ host: hostname, port, path: '/api/health', headers: { host }, setHost: false }, (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        })
          .on('error', fail)
          .end();
      });
    expect((await siteOf(e1)).nodes.find((member) => member.node === 'e2')?.api_url).toBe(ADVERTISED);
    expect(await status('node-two.example:8080')).not.toBe(403);
    expect(await status('NODE-TWO.example')).not.toBe(403);
    expect(await status('node-three.example:8080')).toBe(403);
  }, 30_000);

  it("lists a killed node's tasks as the site stored them, saying their node did not answer", async () => {
    await e2.kill();
    const listing = await settled(
      "e1 seeing e2's cameras unanswered",
      async () => {
        const page = await list(e1);
        const b = page.items.find((task) => task.task_id === ids.b);
        if (b?.node_answered !== false) throw new Error(JSON.stringify(b));
        return page;
      },
      30_000,
    );
    // Nothing dropped: e2's cameras have no room on e1 (one camera at most), so they stay e2's.
    expect(listing.total).toBe(4);
    expect(
      listing.items.map(({ task_id, status, node, node_answered }) => ({
        task_id,
        status,
        node,
        node_answered,
      })),
    ).toEqual([
      { task_id: ids.a, status: 'running', node: 'e1', node_answered: true },
      { task_id: ids.b, status: 'running', node: 'e2', node_answered: false },
      { task_id: ids.c, status: 'running', node: 'e2', node_answered: false },
      { task_id: ids.d, status: 'closed', node: null, node_answered: undefined },
    ]);
    const c = listing.items[2] as Listed;
    expect(c.dump).toBe('node e2 did not answer: status and health as the site last stored them');
    expect(c.health.frames_analysed).toBe(0);
    expect(c.health.stream).toBeNull();
    // e1's own camera is still live.
    expect(listing.items[0]?.health.stream?.state).toBe('running');
    for (const task of listing.items) expect(checkSummary(task)).toEqual({ ok: true, value: task });
  }, 60_000);
});
