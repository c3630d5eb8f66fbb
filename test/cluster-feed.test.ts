import { type ChildProcess, execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventItem } from '../engine/events/delivery';
import { terminate } from './helpers/child';
import {
  analysingOff,
  type Chain,
  readChains,
  type SiteEngine,
  siteOf,
  startCamera,
  startSite,
  stopSite,
} from './helpers/cluster-engines';
import { settled } from './helpers/eventually';
import { FeedClient } from './helpers/feed-client';
import { NatsCluster, type NatsServer } from './helpers/nats-cluster';
import { NginxRtmp, publishLooping } from './helpers/nginx-rtmp';
import { Receiver } from './helpers/receiver';

// The console's feed of a site: three real NATS servers, three engine processes, RTMP cameras
// (nginx-rtmp with looping publishers; the motion app raises an alarm per camera every 5 s) and a
// callback receiver. The feed of any node carries every node's events at the ids of the site's
// event stream; a console whose node is killed resumes on another with Last-Event-ID.
let nats: NatsCluster;
let nginx: NginxRtmp;
let receiver: Receiver;
let engines: SiteEngine[];
const publishers: ChildProcess[] = [];
/** Cameras started on e2 (node B), and one on e1. */
const onB: string[] = [];
const all: string[] = [];

const node = (name: string) => engines.find((engine) => engine.name === name) as SiteEngine;
const feedUrl = (engine: SiteEngine, query = '') =>
  `${engine.url}/api/events/stream?token=${engine.token}${query}`;

/** Each event of the chains as the feed names it: its stream sequence and its event_id, in stream order. */
async function chainedEvents(): Promise<Array<{ id: number; event_id: string; task_id: string }>> {
  const chains = await readChains(nats.urls, all);
  return [...chains]
    .flatMap(([taskId, chain]: [string, Chain]) =>
      chain.streamSeqs.map((id, i) => ({ id, event_id: chain.eventIds[i] as string, task_id: taskId })),
    )
    .sort((a, b) => a.id - b.id);
}

/** The NATS server an engine's client is connected to now: its established connection, as `ss` lists it. */
function serverOf(engine: SiteEngine): NatsServer {
  const pid = engine.child?.pid;
  const peers = execFileSync('ss', ['-Htnp', 'state', 'established'])
    .toString()
    .split('\n')
    .filter((line) => line.includes(`pid=${pid},`))
    .flatMap((line) => line.split(/\s+/));
  const server = nats.servers.find((candidate) => peers.includes(`127.0.0.1:${candidate.port}`));
  if (!server) throw new Error(`engine ${engine.name} is connected to no NATS server of the site`);
  return server;
}

beforeAll(async () => {
  [nats, nginx, receiver] = await Promise.all([NatsCluster.start(3), NginxRtmp.start(), Receiver.start()]);
  for (let i = 0; i < 3; i++) publishers.push(publishLooping(nginx, `cam${i}`, 120));
  engines = await startSite(nats, 3);
  for (let i = 0; i < 3; i++) {
    const engine = node(i < 2 ? 'e2' : 'e1');
    const started = await startCamera(engine, `cam${i}`, nginx.url(`cam${i}`), receiver.url);
    all.push(started.task_id);
    if (engine.name === 'e2') onB.push(started.task_id);
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(publishers.map((child) => terminate(child, 'SIGKILL')));
  if (engines) await stopSite(engines);
  await Promise.all([nats?.dispose(), nginx?.dispose(), receiver?.close()]);
});

describe("the console's feed in a cluster", () => {
  it("shows on node A the events of a task node B runs, at the site's ids", async () => {
    const feed = await FeedClient.open(feedUrl(node('e1')));
    try {
      expect(feed.status).toBe(200);
      await feed.until(
        "an event of B's camera on A's feed",
        () => feed.callbacks().some(({ body }) => onB.includes(body.task_id)),
        60_000,
      );
      // And the changes of their delivery state, which B records.
      await feed.until(
        "a delivery of B's camera on A's feed",
        () =>
          feed.deliveries().some((record) => onB.includes(record.task_id) && record.state === 'delivered'),
        30_000,
      );
      const seen = feed.callbacks().find(({ body }) => onB.includes(body.task_id)) as {
        id: number;
        body: { event_id: string; task_id: string };
      };
      // Its id is where the site's stream holds it, whichever node serves the feed.
      const chained = await chainedEvents();
      expect(chained.find((event) => event.event_id === seen.body.event_id)?.id).toBe(seen.id);
      // Resumed on node C after that id, with a task filter: the next events of that task only.
      const resumed = await FeedClient.open(
        feedUrl(node('e3'), `&task_id=${seen.body.task_id}&last_event_id=${seen.id - 1}`),
      );
      try {
        await resumed.until('the replay on C', () => resumed.callbacks().length > 0, 30_000);
        const [first] = resumed.callbacks();
        expect({ id: first?.id, event_id: first?.body.event_id }).toEqual({
          id: seen.id,
          event_id: seen.body.event_id,
        });
        expect(resumed.callbacks().every(({ body }) => body.task_id === seen.body.task_id)).toBe(true);
      } finally {
        resumed.close();
      }
      // A task filter that would be a subject wildcard names no task: it replays nothing.
      const wildcard = await FeedClient.open(feedUrl(node('e3'), '&task_id=*&last_event_id=0'));
      try {
        await sleep(3_000);
        expect(wildcard.status).toBe(200);
        expect(wildcard.callbacks()).toEqual([]);
      } finally {
        wildcard.close();
      }
    } finally {
      feed.close();
    }
  }, 120_000);

  it("resumes on another node with Last-Event-ID after the console's node is killed: none missed, none twice", async () => {
    const victim = node('e2');
    const other = node('e3');
    const before = await FeedClient.open(feedUrl(victim));
    await before.until('events on the feed of B', () => before.callbacks().length >= 2, 60_000);
    await victim.kill();
    await before.until('the feed of the killed node ending', () => before.ended, 30_000);
    const lastId = before.callbacks().at(-1)?.id as number;
    // The killed node's cameras analyse elsewhere, and events are chained while the console is away:
    // the resumed feed must replay them.
    await Promise.all(onB.map((taskId) => analysingOff(engines, other, taskId, victim.name)));
    await settled('events chained while the console was away', async () => {
      const missed = (await chainedEvents()).filter((event) => event.id > lastId);
      if (missed.length < 2) throw new Error(`${missed.length} events after ${lastId}`);
      return missed;
    });
    const after = await FeedClient.open(feedUrl(other), { 'last-event-id': String(lastId) });
    try {
      expect(after.status).toBe(200);
      // Until an event of each moved camera arrives from its new owner (after the resume).
      await after.until(
        "events of B's cameras from their new owners",
        () => onB.every((taskId) => after.callbacks().some(({ body }) => body.task_id === taskId)),
        60_000,
      );
      const frames = [...before.callbacks(), ...after.callbacks()].map(({ id, body }) => ({
        id,
        event_id: body.event_id,
        task_id: body.task_id,
      }));
      const first = frames[0]?.id as number;
      const last = frames.at(-1)?.id as number;
      const chained = (await chainedEvents()).filter((event) => event.id >= first && event.id <= last);
      console.log(
        `cluster feed: ${before.callbacks().length} events before the kill, ${after.callbacks().length} after ` +
          `the resume on ${other.name}, ${chained.length} chained in that span`,
      );
      expect(frames).toEqual(chained);
    } finally {
      after.close();
      before.close();
    }
  }, 180_000);

  it("lists on the new owner a moved task's whole history, the killed owner's events included", async () => {
    const taskId = onB[0] as string;
    const owner = (await siteOf(node('e1'))).assignments[taskId]?.node;
    expect(owner).not.toBe('e2');
    const chain = (await readChains(nats.urls, [taskId])).get(taskId) as Chain;
    // Asked through e1: answered by the node that runs it now.
    const page = await node('e1').call<{
      last_seq: number;
      next_after_seq: number | null;
      items: EventItem[];
    }>('GET', `/api/task/${taskId}/events?limit=500`);
    const listed = page.items.filter((item) => item.seq <= (chain.seqs.at(-1) as number));
    expect(listed.map((item) => [item.seq, item.event_id])).toEqual(
      chain.seqs.map((seq, i) => [seq, chain.eventIds[i]]),
    );
    // The first events were delivered by the killed owner before it died.
    expect(listed[0]?.state).toBe('delivered');
    // A page deep in the chain starts where its seq says, bodies included.
    const middle = Math.floor(chain.seqs.length / 2);
    const deep = await node('e3').call<{ next_after_seq: number | null; items: EventItem[] }>(
      'GET',
      `/api/task/${taskId}/events?after_seq=${middle}&limit=2&with_body=true`,
    );
    expect(deep.items.map((item) => [item.seq, item.body?.event_id])).toEqual([
      [middle + 1, chain.eventIds[middle]],
      [middle + 2, chain.eventIds[middle + 1]],
    ]);
    expect(deep.next_after_seq).toBe(middle + 2);
    // A task id that would be a subject wildcard names no chain: not every task's events.
    for (const id of ['*', '>', `${taskId.slice(0, 8)}.>`]) {
      const answer = await fetch(`${node('e1').url}/api/task/${encodeURIComponent(id)}/events`, {
        headers: { authorization: `Bearer ${node('e1').token}` },
      });
      expect(((await answer.json()) as { code: number }).code, id).toBe(40401);
    }
  }, 60_000);
  it('loses and repeats nothing across the loss of a NATS server: the live reader comes back in order', async () => {
    const reader = node('e1');
    const feed = await FeedClient.open(feedUrl(reader));
    try {
      await feed.until('events on the feed', () => feed.callbacks().length >= 1, 60_000);
      // The server the reading node is connected to: its consumer goes with it.
      const server = serverOf(reader);
      await server.kill();
      const killedAfter = feed.callbacks().at(-1)?.id as number;
      try {
        // Events chained while the server is gone, then read by the feed.
        const chained = await settled(
          'events chained after the server died',
          async () => {
            const later = (await chainedEvents()).filter((event) => event.id > killedAfter);
            if (later.length < 3) throw new Error(`${later.length} events`);
            return later;
          },
          60_000,
        );
        const lastChained = chained.at(-1)?.id as number;
        await feed.until(
          'the feed catching up with the chains',
          () => (feed.callbacks().at(-1)?.id ?? 0) >= lastChained,
          60_000,
        );
      } finally {
        await server.start();
      }
      const frames = feed
        .callbacks()
        .map(({ id, body }) => ({ id, event_id: body.event_id, task_id: body.task_id }));
      const first = frames[0]?.id as number;
      const last = frames.at(-1)?.id as number;
      expect(frames).toEqual(
        (await chainedEvents()).filter((event) => event.id >= first && event.id <= last),
      );
    } finally {
      feed.close();
    }
  }, 180_000);
});
