import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { terminate } from './helpers/child';
import { analysingOff, readChains, SiteEngine, siteOf, startCamera } from './helpers/cluster-engines';
import { eventually } from './helpers/eventually';
import { NatsCluster } from './helpers/nats-cluster';
import { NginxRtmp, publishLooping } from './helpers/nginx-rtmp';
import { Receiver } from './helpers/receiver';
import { SmallDisk } from './helpers/small-disk';

// Two engines on one NATS server; the first keeps its data on a small disk that the test fills.
let nats: NatsCluster;
let nginx: NginxRtmp;
let receiver: Receiver;
let disk: SmallDisk;
let full: SiteEngine;
let spare: SiteEngine;
const publishers: ChildProcess[] = [];
const taskIds: string[] = [];

beforeAll(async () => {
  [nats, nginx, receiver] = await Promise.all([NatsCluster.start(1), NginxRtmp.start(), Receiver.start()]);
  for (const name of ['d0', 'd1']) publishers.push(publishLooping(nginx, name, 120));
  disk = SmallDisk.create(64);
  full = new SiteEngine('full', disk.dataDir, nats.urls, disk.nodeArgs);
  spare = new SiteEngine('spare', mkdtempSync(join(tmpdir(), 'vc-site-spare-')), nats.urls);
  await full.start();
  await spare.start();
  for (const name of ['d0', 'd1']) {
    const task = await startCamera(full, name, nginx.url(name), receiver.url);
    taskIds.push(task.task_id);
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(publishers.map((child) => terminate(child, 'SIGKILL')));
  await Promise.all([full?.stop(), spare?.stop()]);
  disk?.dispose();
  spare?.dispose();
  await Promise.all([nats?.dispose(), nginx?.dispose(), receiver?.close()]);
});

it('drains a node whose data disk is full: its cameras move, their chains stay whole and delivered', async () => {
  await eventually(
    'callbacks from both cameras',
    () => new Set(receiver.requests.map((r) => r.task_id)).size === 2,
    60_000,
  );
  disk.fill();
  // Its events wait in memory; it says it is draining, and the leader moves its cameras.
  const owners = await Promise.all(
    taskIds.map((id) => analysingOff([full, spare], spare, id, 'full', 60_000)),
  );
  expect(owners).toEqual(['spare', 'spare']);
  const site = await siteOf(spare);
  expect(site.nodes.find((node) => node.node === 'full')?.state).toBe('up');
  // Events go on from the new owner; then every chain is whole and delivered.
  const before = receiver.requests.length;
  await eventually('callbacks after the move', () => receiver.requests.length >= before + 2, 60_000);
  await sleep(2_000);
  const chains = await readChains(nats.urls, taskIds);
  for (const id of taskIds) {
    const chain = chains.get(id);
    expect(chain?.seqs, id).toEqual(chain?.seqs.map((_, i) => i + 1));
  }
  const chained = new Set([...chains.values()].flatMap((chain) => chain.eventIds));
  await eventually(
    'every chained event delivered',
    () => [...chained].every((id) => receiver.requests.some((r) => r.event_id === id)),
    30_000,
  );
  disk.free();
}, 180_000);
