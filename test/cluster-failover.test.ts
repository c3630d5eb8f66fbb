import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SiteTask } from '../engine/cluster/site-view';
import type { CallbackBody } from '../engine/events/schema';
import type { TaskView } from '../engine/tasks/schema';
import { terminate } from './helpers/child';
import {
  analysingOff,
  expectChainsSound,
  expectOneEventIdPerSeq,
  readChains,
  type Site,
  type SiteEngine,
  siteOf,
  startCamera,
  startSite,
  stopSite,
  unchainedOf,
} from './helpers/cluster-engines';
import { eventually, settled } from './helpers/eventually';
import { Mosquitto } from './helpers/mosquitto';
import { NatsCluster, type NatsServer } from './helpers/nats-cluster';
import { NginxRtmp, publishLooping } from './helpers/nginx-rtmp';
import { Receiver } from './helpers/receiver';

// A site on loopback: three real NATS servers, three engine processes, six RTMP cameras (nginx-rtmp
// with looping publishers), one callback receiver. Faults are real: SIGKILL and SIGSTOP.
const CAMERAS = 6;
let nats: NatsCluster;
let nginx: NginxRtmp;
let receiver: Receiver;
let broker: Mosquitto;
let subscriber: MqttClient;
/** What the site published on MQTT, as a subscriber got it. */
const published: CallbackBody[] = [];
let engines: SiteEngine[];
const publishers: ChildProcess[] = [];
const tasks: Array<{ id: string; startedOn: string }> = [];

/**
 * How long no camera may have moved for the site to count as settled: longer than the placement
 * leader smooths its measured costs over (10 s, COST_SMOOTHING_MS in cluster-node.ts), so that a
 * rebalance onto an engine back from a fault is not still to come.
 */
const QUIET_MS = 12_000;

/**
 * The site once placement has settled: no move under way, no rebalance, no camera moved for QUIET_MS.
 * A planned move's warm-up (`next`) can stand unchanged for seconds: a site in the middle of one is
 * not settled. Reproduced under load: a rebalance onto the engine back from its freeze, planned 5 s
 * before the NATS server died, was handed over in the test's window, which took it for a move the
 * death caused (as in CI: a camera moved onto that engine, e3 -> e2).
 */
async function quietSite(engine: SiteEngine): Promise<Site> {
  let last = '';
  let since = Date.now();
  return settled(
    'placement settled',
    async () => {
      const site = await fullSiteOf(engine);
      const now = JSON.stringify(site.assignments);
      if (now !== last) {
        last = now;
        since = Date.now();
      }
      if (Object.values(site.assignments).some((a) => a.next !== undefined))
        throw new Error('a move under way');
      if (site.placement?.rebalancing) throw new Error('a rebalance under way');
      if (Date.now() - since < QUIET_MS) throw new Error(`cameras moved within ${QUIET_MS / 1000} s`);
      return site;
    },
    60_000,
    500,
  );
}

/**
 * Which of the tasks a node still holds as its own: it answers GET /api/task/:id of those itself, and
 * forwards the others to the node that runs them (x-vc-node). (GET /api/tasks lists the whole site.)
 */
async function storedOn(engine: SiteEngine, taskIds: readonly string[]): Promise<string[]> {
  const held = await Promise.all(
    taskIds.map(async (id) => {
      const answer = await fetch(`${engine.url}/api/task/${id}`, {
        headers: { authorization: `Bearer ${engine.token}` },
        signal: AbortSignal.timeout(10_000),
      });
      await answer.arrayBuffer();
      if (answer.status !== 200) throw new Error(`${engine.name} GET /api/task/${id}: ${answer.status}`);
      return answer.headers.get('x-vc-node') === null;
    }),
  );
  return taskIds.filter((_id, i) => held[i]);
}

/** The site as a node sees it once it knows every camera's assignment. */
const fullSiteOf = (engine: SiteEngine) =>
  settled(`${engine.name} seeing every camera`, async () => {
    const site = await siteOf(engine);
    if (Object.keys(site.assignments).length < CAMERAS) throw new Error('not every camera seen');
    return site;
  });

beforeAll(async () => {
  [nats, nginx, receiver, broker] = await Promise.all([
    NatsCluster.start(3),
    NginxRtmp.start(),
    Receiver.start(),
    Mosquitto.start(),
  ]);
  subscriber = await connectAsync(broker.url, { clientId: 'vc-site-subscriber', clean: false });
  subscriber.on('message', (_topic, payload) =>
    published.push(JSON.parse(payload.toString()) as CallbackBody),
  );
  await subscriber.subscribeAsync('vision/#', { qos: 1 });
  for (let i = 0; i < CAMERAS; i++) publishers.push(publishLooping(nginx, `cam${i}`, 120));
  engines = await startSite(nats, 3);
  // Every node publishes the events of the tasks it runs to one broker (its settings are its own).
  for (const engine of engines)
    await engine.call('PUT', '/api/settings/mqtt', {
      enabled: true,
      url: broker.url,
      client_id: `vc-${engine.name}`,
    });
  // Two cameras started on each engine: each runs where it was started.
  for (let i = 0; i < CAMERAS; i++) {
    const engine = engines[i % 3] as SiteEngine;
    const started = await startCamera(engine, `cam${i}`, nginx.url(`cam${i}`), receiver.url);
    tasks.push({ id: started.task_id, startedOn: engine.name });
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(publishers.map((child) => terminate(child, 'SIGKILL')));
  if (engines) await stopSite(engines);
  await subscriber?.endAsync(true);
  await Promise.all([nats?.dispose(), nginx?.dispose(), receiver?.close(), broker?.dispose()]);
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
    expect(Object.fromEntries(tasks.map(({ id }) => [id, site.assignments[id]]))).toEqual(
      Object.fromEntries(tasks.map(({ id, startedOn }) => [id, { node: startedOn, epoch: 1 }])),
    );
    // The site's tasks from any node: each with the node that runs it.
    const listed = await (engines[2] as SiteEngine).call<SiteTask[]>('GET', '/api/cluster/tasks');
    expect(
      listed.map(({ task_id, name, status, node, epoch }) => ({ task_id, name, status, node, epoch })),
    ).toEqual(
      tasks.map(({ id, startedOn }, i) => ({
        task_id: id,
        name: `cam${i}`,
        status: 'running',
        node: startedOn,
        epoch: 1,
      })),
    );
  }, 30_000);

  it("answers a task's own routes from any node: forwarded to the node that runs it", async () => {
    const site = await fullSiteOf(engines[0] as SiteEngine);
    const task = tasks.find((t) => site.assignments[t.id]?.node === 'e2') as { id: string };
    const asked = engines[0] as SiteEngine;
    const answer = await fetch(`${asked.url}/api/task/${task.id}`, {
      headers: { authorization: `Bearer ${asked.token}` },
    });
    expect(answer.headers.get('x-vc-node')).toBe('e2');
    expect(((await answer.json()) as { data: TaskView }).data).toMatchObject({
      task_id: task.id,
      status: 'running',
    });
    const snapshot = await settled('a snapshot through e1', async () => {
      const got = await fetch(`${asked.url}/api/task/${task.id}/snapshot`, {
        headers: { authorization: `Bearer ${asked.token}` },
      });
      if (got.status !== 200) throw new Error(`${got.status} ${await got.text()}`);
      return got;
    });
    expect(snapshot.headers.get('content-type')).toBe('image/jpeg');
    expect((await snapshot.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    // A change made through e1 is made where the task runs.
    await asked.call('PUT', `/api/task/${task.id}`, { name: 'renamed through e1' });
    const owner = engines[1] as SiteEngine;
    expect((await owner.call<TaskView>('GET', `/api/task/${task.id}`)).name).toBe('renamed through e1');
    // The forwarding mark is a secret of each process: sent by a client, it opens nothing.
    const forgeries: Record<string, string>[] = [
      { 'x-vc-forwarded': 'guess', 'x-vc-forwarded-user': 'admin' },
      { 'x-vc-forwarded-user': 'admin' },
    ];
    for (const headers of forgeries) {
      const forged = await fetch(`${owner.url}/api/task/${task.id}`, { headers });
      expect(forged.status).toBe(401);
    }
  }, 60_000);

  it("moves a killed engine's cameras to the others; the others' stay where they are", async () => {
    // Events flow first (motion in the clip: an alarm per camera every 5 s, the rule's interval).
    await eventually('a callback per camera', () => receiver.requests.length >= CAMERAS, 60_000);
    const victim = engines[0] as SiteEngine;
    const survivor = engines[1] as SiteEngine;
    const before = await fullSiteOf(survivor);
    const moved = tasks.filter((task) => before.assignments[task.id]?.node === victim.name);
    const killedAt = Date.now();
    await victim.kill();
    const owners = await Promise.all(
      moved.map((task) => analysingOff(engines, survivor, task.id, victim.name)),
    );
    const seconds = (Date.now() - killedAt) / 1000;
    console.log(
      `cluster: engine killed (${before.leader === victim.name ? 'the placement leader' : 'a follower'}): ` +
        `its ${moved.length} cameras analyse again on ${owners.join(', ')} after ${seconds.toFixed(1)} s ` +
        `(killed at ${new Date(killedAt).toISOString()})`,
    );
    expect(owners.every((owner) => owner !== victim.name)).toBe(true);
    const after = await fullSiteOf(survivor);
    for (const task of tasks.filter((t) => !moved.includes(t)))
      expect(after.assignments[task.id], task.id).toEqual(before.assignments[task.id]);
    // Back again, the killed engine does not resume what moved from its own rows: it runs only
    // what the site assigns it now (placement may give it cameras back to even the load).
    await victim.start();
    await settled('the killed engine running only what is assigned to it', async () => {
      const site = await siteOf(victim);
      if (site.nodes.find((node) => node.node === victim.name)?.state !== 'up') throw new Error('not up');
      const stored = await storedOn(
        victim,
        tasks.map((task) => task.id),
      );
      const stray = stored.filter((id) => site.assignments[id]?.node !== victim.name);
      if (stray.length > 0) throw new Error(`runs ${stray.join(', ')} assigned elsewhere`);
      return true;
    });
  }, 180_000);

  it("moves a frozen engine's cameras after its lease; resumed, it stops them and appends nothing", async () => {
    const frozen = engines[1] as SiteEngine;
    const watcher = engines[2] as SiteEngine;
    // From a settled site: the killed engine, back, may be taking cameras (a rebalance).
    const before = await quietSite(watcher);
    const moved = tasks.filter((task) => before.assignments[task.id]?.node === frozen.name);
    expect(moved.length).toBeGreaterThan(0);
    const frozenAt = Date.now();
    frozen.signal('SIGSTOP');
    try {
      const owners = await Promise.all(
        moved.map((task) => analysingOff(engines, watcher, task.id, frozen.name)),
      );
      console.log(
        `cluster: engine frozen: its ${moved.length} cameras analyse again on ${owners.join(', ')} after ` +
          `${((Date.now() - frozenAt) / 1000).toFixed(1)} s`,
      );
      await sleep(Math.max(0, 10_000 - (Date.now() - frozenAt)));
    } finally {
      frozen.signal('SIGCONT');
    }
    // Resumed, it sees the tasks assigned elsewhere and stops them.
    await settled('the frozen engine let go', async () => {
      const still = await storedOn(
        frozen,
        moved.map((task) => task.id),
      );
      if (still.length > 0) throw new Error(`${still.length} moved tasks still listed`);
      return true;
    });
  }, 120_000);

  it('moves no camera when a NATS server dies, and events go on', async () => {
    const watcher = engines[2] as SiteEngine;
    const before = await quietSite(watcher);
    const received = receiver.requests.length;
    await (nats.servers[0] as NatsServer).kill();
    await sleep(12_000);
    const after = await settled('the site after a NATS server died', () => siteOf(watcher));
    expect(after.assignments).toEqual(before.assignments);
    await eventually(
      'callbacks after the server died',
      () => receiver.requests.length >= received + CAMERAS,
      60_000,
    );
    await (nats.servers[0] as NatsServer).start();
  }, 120_000);

  it('keeps every chain gap-free, fenced and delivered', async () => {
    const stored = await readChains(
      nats.urls,
      tasks.map((task) => task.id),
    );
    expectChainsSound(
      stored,
      tasks.map((task) => task.id),
    );
    // Every event in the chains reaches the receiver (at least once), duplicates sharing event_id.
    const chainIds = new Set([...stored.values()].flatMap((chain) => chain.eventIds));
    await eventually(
      'every chained event delivered',
      () => {
        const received = new Set(receiver.requests.map((request) => request.event_id));
        return [...chainIds].every((id) => received.has(id));
      },
      60_000,
    );
    // Nothing goes out that its chain lacks: a node never delivers what the site has not chained.
    const ids = tasks.map((task) => task.id);
    const unchained = await unchainedOf(nats.urls, ids, receiver.requests);
    expect(unchained.map((r) => `${r.task_id}:${r.seq}:${r.body?.event}`)).toEqual([]);
    expectOneEventIdPerSeq(receiver.requests);
    // MQTT too: every chained event published (the restarted node's broker cursor included), never
    // one seq of a task with two event_ids, nothing the chains lack.
    await eventually(
      'every chained event published on MQTT',
      () => {
        const seen = new Set(published.map((body) => body.event_id));
        return [...chainIds].every((id) => seen.has(id));
      },
      60_000,
    );
    expect((await unchainedOf(nats.urls, ids, published)).map((b) => `${b.task_id}:${b.seq}`)).toEqual([]);
    expectOneEventIdPerSeq(published);
    const duplicates = receiver.requests.length - new Set(receiver.requests.map((r) => r.event_id)).size;
    console.log(
      `cluster: ${chainIds.size} events chained, ${receiver.requests.length} callbacks received, ${duplicates} duplicates (same event_id)`,
    );
  }, 120_000);
});
