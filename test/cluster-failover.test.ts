import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectCluster } from '../engine/cluster/connection';
import { readChain } from '../engine/cluster/event-chain';
import type { SiteView } from '../engine/cluster/site-view';
import type { TaskView } from '../engine/tasks/schema';
import { terminate } from './helpers/child';
import { type SiteEngine, startSite, stopSite } from './helpers/cluster-engines';
import { eventually } from './helpers/eventually';
import { NATS_PASSWORD, NATS_USER, NatsCluster } from './helpers/nats-cluster';
import { NginxRtmp, publishLooping } from './helpers/nginx-rtmp';
import { Receiver } from './helpers/receiver';

// A site on loopback: three real NATS servers, three engine processes, six RTMP cameras (nginx-rtmp
// with looping publishers), one callback receiver. Faults are real: SIGKILL and SIGSTOP.
const CAMERAS = 6;
let nats: NatsCluster;
let nginx: NginxRtmp;
let receiver: Receiver;
let engines: SiteEngine[];
const publishers: ChildProcess[] = [];
const tasks: Array<{ id: string; startedOn: string }> = [];

type Site = Extract<SiteView, { enabled: true }>;

/** Waits for `check` to return a value without throwing (engines answer errors while they settle). */
function settled<T>(what: string, check: () => Promise<T>, timeoutMs = 30_000, everyMs = 250): Promise<T> {
  let last = '';
  return eventually(
    `${what} (${last})`,
    async () => {
      try {
        return await check();
      } catch (error) {
        last = (error as Error).message;
        return undefined;
      }
    },
    timeoutMs,
    everyMs,
  );
}

const siteOf = (engine: SiteEngine) => engine.call<SiteView>('GET', '/api/cluster') as Promise<Site>;
const byName = (name: string) => engines.find((engine) => engine.name === name) as SiteEngine;

/** Waits until the task runs on a node other than `from` and analyses frames there; its node. */
async function analysingElsewhere(via: SiteEngine, taskId: string, from: string): Promise<string> {
  return settled(
    `task ${taskId} analysing off ${from}`,
    async () => {
      const owner = (await siteOf(via)).assignments[taskId]?.node;
      if (!owner || owner === from) throw new Error(`task ${taskId} still on ${owner}`);
      const view = await byName(owner).call<TaskView>('GET', `/api/task/${taskId}`);
      if (view.status !== 'running' || view.health.frames_analysed === 0)
        throw new Error(`task ${taskId} on ${owner}: ${view.status}, ${view.health.frames_analysed} frames`);
      return owner;
    },
    45_000,
    100,
  );
}

/** Every task's chain as stored in JetStream: its event seqs in order and its owners. */
async function chains(): Promise<Map<string, { seqs: number[]; eventIds: string[]; owners: string[] }>> {
  const conn = await connectCluster(
    { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD },
    'checker',
  );
  try {
    const result = new Map<string, { seqs: number[]; eventIds: string[]; owners: string[] }>();
    for (const { id } of tasks) {
      const entries = await readChain(conn, id, 0, 100_000);
      result.set(id, {
        seqs: entries.flatMap(({ entry }) => (entry.kind === 'event' ? [entry.seq] : [])),
        eventIds: entries.flatMap(({ entry }) => (entry.kind === 'event' ? [entry.event_id] : [])),
        owners: entries.flatMap(({ entry }) =>
          entry.kind === 'owner' ? [`${entry.node}/${entry.epoch}`] : [],
        ),
      });
    }
    return result;
  } finally {
    await conn.close();
  }
}

beforeAll(async () => {
  [nats, nginx, receiver] = await Promise.all([NatsCluster.start(3), NginxRtmp.start(), Receiver.start()]);
  for (let i = 0; i < CAMERAS; i++) publishers.push(publishLooping(nginx, `cam${i}`, 120));
  engines = await startSite(nats, 3);
  // Two cameras started on each engine: each runs where it was started.
  for (let i = 0; i < CAMERAS; i++) {
    const engine = engines[i % 3] as SiteEngine;
    const started = await settled(`camera ${i} started`, () =>
      engine.call<TaskView>('POST', '/api/task', {
        name: `cam${i}`,
        zapk_id: 'builtin',
        app_ids: ['motion'],
        video_url: nginx.url(`cam${i}`),
        report_url: receiver.url,
      }),
    );
    tasks.push({ id: started.task_id, startedOn: engine.name });
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(publishers.map((child) => terminate(child, 'SIGKILL')));
  if (engines) await stopSite(engines);
  await Promise.all([nats?.dispose(), nginx?.dispose(), receiver?.close()]);
});

describe('a site of three engines on three NATS servers', () => {
  it('shows every node and which node runs each task, from any node', async () => {
    const site = await settled('every node and task seen', async () => {
      const seen = await siteOf(engines[2] as SiteEngine);
      if (Object.keys(seen.assignments).length < CAMERAS || seen.nodes.length < 3) throw new Error('not yet');
      return seen;
    });
    expect(site.nodes.map((node) => [node.node, node.state]).sort()).toEqual([
      ['e1', 'up'],
      ['e2', 'up'],
      ['e3', 'up'],
    ]);
    expect(Object.fromEntries(tasks.map(({ id, startedOn }) => [id, site.assignments[id]]))).toEqual(
      Object.fromEntries(tasks.map(({ id, startedOn }) => [id, { node: startedOn, epoch: 1 }])),
    );
  }, 30_000);

  it("moves a killed engine's cameras to the others, and their event chains go on without a gap", async () => {
    // Events flow first (motion in the clip: an alarm per camera every 5 s, the rule's interval).
    await eventually('a callback per camera', () => receiver.requests.length >= CAMERAS, 60_000);
    const victim = engines[0] as SiteEngine;
    const moved = tasks.filter((task) => task.startedOn === victim.name);
    const killedAt = Date.now();
    await victim.kill();
    const survivor = engines[1] as SiteEngine;
    const owners = await Promise.all(moved.map((task) => analysingElsewhere(survivor, task.id, victim.name)));
    const seconds = (Date.now() - killedAt) / 1000;
    console.log(
      `cluster: ${moved.length} cameras of a killed engine analyse again on ${owners.join(', ')} after ${seconds.toFixed(1)} s`,
    );
    expect(owners.every((owner) => owner === 'e2' || owner === 'e3')).toBe(true);
    // The others' cameras did not move.
    const site = await siteOf(survivor);
    for (const task of tasks.filter((t) => t.startedOn !== victim.name))
      expect(site.assignments[task.id]).toEqual({ node: task.startedOn, epoch: 1 });

    // More events on the new owners, then every chain: seqs 1..n, each once, owners in epoch order.
    const before = receiver.requests.length;
    await eventually('callbacks after the move', () => receiver.requests.length >= before + CAMERAS, 60_000);
    const stored = await chains();
    for (const { id, startedOn } of tasks) {
      const chain = stored.get(id);
      expect(chain?.seqs, id).toEqual(chain?.seqs.map((_, i) => i + 1));
      const expectedOwners = moved.some((task) => task.id === id)
        ? [`${startedOn}/1`, `${site.assignments[id]?.node}/2`]
        : [`${startedOn}/1`];
      expect(chain?.owners, id).toEqual(expectedOwners);
    }
    // Every event in the chains reaches the receiver (at least once), duplicates sharing event_id.
    const chainIds = new Set([...stored.values()].flatMap((chain) => chain.eventIds));
    await eventually(
      'every chained event delivered',
      () => {
        const received = new Set(receiver.requests.map((request) => request.event_id));
        return [...chainIds].every((id) => received.has(id));
      },
      30_000,
    );
    const bySeq = new Map<string, string>();
    for (const request of receiver.requests) {
      const key = `${request.task_id}:${request.seq}`;
      const known = bySeq.get(key);
      if (known) expect(request.event_id, key).toBe(known);
      bySeq.set(key, request.event_id);
    }
  }, 180_000);
});
