import type { KV } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterConnection, ClusterRefused, connectCluster } from '../engine/cluster/connection';
import { chainTail, readChain, Superseded, TaskChain } from '../engine/cluster/event-chain';
import type { ClusterOptions } from '../engine/cluster/options';
import { belowFloor } from '../engine/cluster/server-floor';
import { eventSubject, openSiteStore, type SiteStore } from '../engine/cluster/site-store';
import type { CallbackBody } from '../engine/events/schema';
import { NATS_PASSWORD, NATS_USER, NatsCluster } from './helpers/nats-cluster';

// Three real NATS servers (the version scripts/nats-server.sh provides) clustered on loopback.
let cluster: NatsCluster;
let options: ClusterOptions;
const connections: ClusterConnection[] = [];
let site: SiteStore;

async function client(name: string): Promise<ClusterConnection> {
  const conn = await connectCluster(options, name);
  connections.push(conn);
  return conn;
}

beforeAll(async () => {
  cluster = await NatsCluster.start(3);
  options = { servers: cluster.urls, user: NATS_USER, password: NATS_PASSWORD };
  site = await openSiteStore(await client('setup'), 3);
}, 60_000);

afterAll(async () => {
  await Promise.all(connections.map((conn) => conn.close()));
  await cluster?.dispose();
});

describe('the server floor', () => {
  it('orders versions as semver, a pre-release before its release', () => {
    expect(
      ['2.9.10', '2.9.21', '2.10.26', '2.10.27', '2.10.27-RC.1', '2.11.0', '2.15.1', 'v2.10.27', ''].map(
        (v) => belowFloor(v),
      ),
    ).toEqual([true, true, true, false, true, false, false, false, true]);
  });

  it('refuses a server below the floor, read from the server at connect', async () => {
    // The real server is 2.10.27 or later; a floor above it stands for a server below ours.
    const refused = await connectCluster(options, 'old', '99.0.0').catch((error: Error) => error);
    expect(refused).toBeInstanceOf(ClusterRefused);
    expect((refused as Error).message).toMatch(/below 99\.0\.0/);
    const conn = await client('current');
    expect(belowFloor(conn.serverVersion)).toBe(false);
  });

  it('refuses to connect without credentials, and the servers refuse a wrong password', async () => {
    await expect(connectCluster({ ...options, password: '' }, 'anonymous')).rejects.toThrow(/anonymous/);
    await expect(connectCluster({ ...options, password: 'wrong' }, 'wrong')).rejects.toThrow(/auth/i);
  });
});

describe('compare-and-set under racing writers', () => {
  it('has exactly one winner in each of 200 rounds of three clients updating from one revision', async () => {
    const writers = await Promise.all(
      ['w1', 'w2', 'w3'].map(async (name) => (await client(name)).kvm.open('vc_leases')),
    );
    const [kv] = writers as [KV, ...KV[]];
    let revision = await kv.put('race', 'start');
    const winners: number[] = [];
    for (let round = 0; round < 200; round++) {
      const results = await Promise.allSettled(
        writers.map((w, i) => w.update('race', `r${round}w${i}`, revision)),
      );
      const won = results.filter(
        (result) => result.status === 'fulfilled',
      ) as PromiseFulfilledResult<number>[];
      winners.push(won.length);
      revision = won[0]?.value ?? (await kv.get('race'))?.revision ?? revision;
    }
    expect(winners.filter((count) => count !== 1)).toEqual([]);
  }, 120_000);
});

describe('a task event chain', () => {
  /** A task-level event as a chain holds it. */
  const event = (seq: number) => {
    const body: CallbackBody = {
      event: 'stream_lost',
      task_id: 'task',
      app_id: '',
      business_id: '',
      timestamp: seq,
      event_id: `e-${seq}`,
      seq,
      data: { status: 'stream_lost', dump: '' },
    };
    return { seq, event_id: body.event_id, late: false, body };
  };

  it("refuses a superseded owner's appends once the next owner has claimed it, and stays gap-free", async () => {
    const [a, b] = await Promise.all([client('node-a'), client('node-b')]);
    const first = new TaskChain(a, 'task-1', 'node-a', 1);
    expect(await first.claim()).toBe(0);
    for (const seq of [1, 2, 3]) await first.append(event(seq));
    const second = new TaskChain(b, 'task-1', 'node-b', 2);
    expect(await second.claim()).toBe(3);
    const refused = await first.append(event(4)).catch((error: Error) => error);
    expect(refused).toBeInstanceOf(Superseded);
    expect((refused as Superseded).by).toEqual({ node: 'node-b', epoch: 2 });
    await second.append(event(4));
    // An owner of an older epoch cannot claim it back.
    await expect(new TaskChain(a, 'task-1', 'node-a', 1).claim()).rejects.toBeInstanceOf(Superseded);
    const chain = (await readChain(a, 'task-1', 0, 100)).map(({ entry }) =>
      entry.kind === 'owner' ? `owner ${entry.node}/${entry.epoch}` : `event ${entry.seq}`,
    );
    expect(chain).toEqual(['owner node-a/1', 'event 1', 'event 2', 'event 3', 'owner node-b/2', 'event 4']);
    expect(site.tasks).toBeDefined();
  }, 30_000);

  it('reads back only entries the contract allows: a body another node forged is never taken', async () => {
    const a = await client('forger');
    const chain = new TaskChain(a, 'task-forged', 'forger', 1);
    await chain.claim();
    await chain.append(event(1));
    const forged = {
      kind: 'event',
      epoch: 1,
      seq: 2,
      event_id: 'e-2',
      late: false,
      body: { task_id: 'x', seq: 2 },
    };
    await a.js.publish(eventSubject('task-forged'), JSON.stringify(forged));
    const seqs = (await readChain(a, 'task-forged', 0, 10)).map(({ entry }) => `${entry.kind} ${entry.seq}`);
    expect(seqs).toEqual(['owner 0', 'event 1']);
    expect((await chainTail(a, 'task-forged')).entry).toBeNull();
  }, 30_000);

  it('lets exactly one of two owners racing for the same chain append', async () => {
    const [a, b] = await Promise.all([client('race-a'), client('race-b')]);
    let conflicts = 0;
    for (let round = 0; round < 50; round++) {
      const task = `race-${round}`;
      const x = new TaskChain(a, task, 'race-a', 1);
      await x.claim();
      const y = new TaskChain(b, task, 'race-b', 2);
      // y claims while x appends: either x's event lands before y's claim (and y's entry follows it)
      // or x is refused; never both an event after y's claim from x.
      const [appended, claimed] = await Promise.allSettled([x.append(event(1)), y.claim()]);
      expect(claimed).toMatchObject({ status: 'fulfilled' });
      if (appended.status === 'rejected') conflicts += 1;
      const entries = (await readChain(a, task, 0, 10)).map(({ entry }) => entry);
      const ownerB = entries.findIndex((entry) => entry.kind === 'owner' && entry.node === 'race-b');
      expect(entries.slice(ownerB + 1)).toEqual([]);
      expect(entries[ownerB]).toMatchObject({ seq: appended.status === 'fulfilled' ? 1 : 0 });
    }
    expect(conflicts).toBeGreaterThanOrEqual(0);
  }, 60_000);
});
