import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MqttSettingsView } from '../engine/callbacks/mqtt-settings';
import type { CallbackBody } from '../engine/events/schema';
import {
  analysingOff,
  expectChainsSound,
  expectOneEventIdPerSeq,
  fileCamera,
  readChains,
  type SiteEngine,
  siteOf,
  startSite,
  stopSite,
  unchainedOf,
} from './helpers/cluster-engines';
import { eventually, settled } from './helpers/eventually';
import { Mosquitto } from './helpers/mosquitto';
import { NatsCluster } from './helpers/nats-cluster';
import { Receiver } from './helpers/receiver';

// Three engines on one real NATS server, a real mosquitto broker and callback receiver, two cameras
// (the fixture video, looping, with the motion app). MQTT is the owner's to publish, from the chain,
// as HTTP callbacks are: across a planned move and a kill while the broker was down, every chained
// event reaches the broker's subscriber, each event_id with one seq, nothing the chains lack.
let nats: NatsCluster;
let broker: Mosquitto;
let receiver: Receiver;
let subscriber: MqttClient;
let engines: SiteEngine[];
const published: CallbackBody[] = [];
const taskIds: string[] = [];

/** Callbacks of a task the receiver got. */
const callbacksOf = (taskId: string) =>
  receiver.requests.filter((request) => request.task_id === taskId).length;

beforeAll(async () => {
  [nats, broker, receiver] = await Promise.all([
    NatsCluster.start(1),
    Mosquitto.start({ logPublishes: true }),
    Receiver.start(),
  ]);
  subscriber = await connectAsync(broker.url, { clientId: 'vc-mqtt-subscriber', clean: false });
  subscriber.on('message', (_topic, payload) =>
    published.push(JSON.parse(payload.toString()) as CallbackBody),
  );
  await subscriber.subscribeAsync('vision/#', { qos: 1 });
  engines = await startSite(nats, 3);
  const first = engines[0] as SiteEngine;
  // Set on one node, the site's settings: every node connects with its own client id.
  await first.call('PUT', '/api/settings/mqtt', { enabled: true, url: broker.url });
  for (const engine of engines)
    await settled(`${engine.name} connected to the broker`, async () => {
      const view = await engine.call<MqttSettingsView>('GET', '/api/settings/mqtt');
      if (!view.status.connected) throw new Error(`not connected: ${view.status.last_error}`);
      return view;
    });
  for (const name of ['cam1', 'cam2'])
    taskIds.push((await fileCamera(first, name, { report_url: receiver.url })).task_id);
}, 180_000);

afterAll(async () => {
  await stopSite(engines ?? []);
  await subscriber?.endAsync(true);
  await Promise.all([nats?.dispose(), broker?.dispose(), receiver?.close()]);
});

describe('MQTT from the owner only', () => {
  it('publishes on across a planned move: the owner leaves the site', async () => {
    const leaving = engines[0] as SiteEngine;
    const via = engines[1] as SiteEngine;
    await eventually(
      'events of both cameras published',
      () => taskIds.every((id) => published.some((body) => body.task_id === id)),
      60_000,
    );
    await leaving.call('POST', '/api/cluster/leave');
    await Promise.all(taskIds.map((id) => analysingOff(engines, via, id, leaving.name, 90_000)));
    await settled(
      `${leaving.name} out of the site`,
      async () => {
        const left = await leaving.call<{ state: string }>('POST', '/api/cluster/leave');
        if (left.state !== 'left') throw new Error(left.state);
        return left;
      },
      60_000,
    );
  }, 180_000);

  it('publishes nothing from an owner frozen while its task moved, once it wakes', async () => {
    const [, a, b] = engines as [SiteEngine, SiteEngine, SiteEngine];
    const site = await siteOf(a);
    const frozen = site.assignments[taskIds[0] as string]?.node === a.name ? a : b;
    const other = frozen === a ? b : a;
    const frozenTasks = taskIds.filter((id) => site.assignments[id]?.node === frozen.name);
    const clientId = (await frozen.call<MqttSettingsView>('GET', '/api/settings/mqtt')).client_id;
    // The broker goes away: the frozen node stores, chains and delivers events it cannot publish.
    await broker.stop();
    const before = frozenTasks.map(callbacksOf);
    await eventually(
      'callbacks while the broker is away',
      () => frozenTasks.every((id, i) => callbacksOf(id) >= (before[i] as number) + 2),
      60_000,
    );
    frozen.signal('SIGSTOP');
    let logFrom = 0;
    try {
      await Promise.all(frozenTasks.map((id) => analysingOff(engines, other, id, frozen.name, 90_000)));
      await broker.restart();
      logFrom = broker.log.length;
    } finally {
      frozen.signal('SIGCONT');
    }
    // Awake, it reconnects to the broker and sees its tasks taken over: it stops them.
    await settled(
      `${frozen.name} letting its tasks go`,
      async () => {
        const stopped = frozenTasks.filter((id) =>
          new RegExp(`stopped task ${id}|task ${id} was taken over`).test(frozen.log),
        );
        if (stopped.length < frozenTasks.length) throw new Error(`${stopped.length} stopped`);
        const view = await frozen.call<MqttSettingsView>('GET', '/api/settings/mqtt');
        if (!view.status.connected) throw new Error('not connected to the broker again');
        return true;
      },
      60_000,
    );
    await new Promise((done) => setTimeout(done, 3_000));
    const publishesBy = (id: string) =>
      broker.log
        .slice(logFrom)
        .split('\n')
        .filter((line) => line.includes(`Received PUBLISH from ${id} `))
        .filter((line) => frozenTasks.some((task) => line.includes(`'vision/${task}/`)));
    expect(publishesBy(clientId)).toEqual([]);
    // The log does name publishers: the new owner's of those tasks are there.
    const newOwner = (await other.call<MqttSettingsView>('GET', '/api/settings/mqtt')).client_id;
    expect(publishesBy(newOwner).length).toBeGreaterThan(0);
  }, 240_000);

  it("publishes what a killed owner's broker never got: its new owner resumes from the site's MQTT mark", async () => {
    const [, a, b] = engines as [SiteEngine, SiteEngine, SiteEngine];
    const site = await siteOf(a);
    const victim = site.assignments[taskIds[0] as string]?.node === a.name ? a : b;
    const survivor = victim === a ? b : a;
    const victimTasks = taskIds.filter((id) => site.assignments[id]?.node === victim.name);
    // The broker goes away; the victim's events go on to the receiver (and into the chains), then it dies.
    await broker.stop();
    const before = victimTasks.map(callbacksOf);
    await eventually(
      'callbacks while the broker is away',
      () => victimTasks.every((id, i) => callbacksOf(id) >= (before[i] as number) + 2),
      60_000,
    );
    await victim.kill();
    await Promise.all(victimTasks.map((id) => analysingOff(engines, survivor, id, victim.name, 90_000)));
    await broker.restart();
  }, 180_000);

  it('has every chained event published, each event_id with one seq, nothing the chains lack', async () => {
    const chains = await readChains(nats.urls, taskIds);
    expectChainsSound(chains, taskIds);
    const chained = [...chains.values()].flatMap((chain) => chain.eventIds);
    await eventually(
      'every chained event published on MQTT',
      () => {
        const seen = new Set(published.map((body) => body.event_id));
        const missing = chained.filter((id) => !seen.has(id));
        return missing.length === 0;
      },
      60_000,
    ).catch((error: Error) => {
      const seen = new Set(published.map((body) => body.event_id));
      const missing = [...chains].flatMap(([task, chain]) =>
        chain.seqs.filter((_seq, i) => !seen.has(chain.eventIds[i] as string)).map((seq) => `${task}:${seq}`),
      );
      throw new Error(`${error.message}; not published: ${missing.join(', ')}`);
    });
    expect((await unchainedOf(nats.urls, taskIds, published)).map((b) => `${b.task_id}:${b.seq}`)).toEqual(
      [],
    );
    expectOneEventIdPerSeq(published);
    // And the other way round: an event_id is never published with two seqs.
    const seqOf = new Map<string, number>();
    for (const body of published) {
      expect(body.seq, body.event_id).toBe(seqOf.get(body.event_id) ?? body.seq);
      seqOf.set(body.event_id, body.seq);
    }
    const duplicates = published.length - seqOf.size;
    console.log(
      `cluster mqtt: ${chained.length} events chained, ${published.length} published, ${duplicates} duplicates (same event_id)`,
    );
  }, 120_000);
});
