import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { connectCluster } from '../../engine/cluster/connection';
import { readChain } from '../../engine/cluster/event-chain';
import type { SiteView } from '../../engine/cluster/site-view';
import type { TaskView } from '../../engine/tasks/schema';
import { terminate } from './child';
import { signIn } from './engine-process';
import { settled } from './eventually';
import { ADMIN_PASSWORD, BUILTIN_PACKAGE_DIR, TEST_MEDIA_DIRS, VIDEO } from './fixtures';
import { NATS_PASSWORD, NATS_USER, type NatsCluster, nodeUserOf } from './nats-cluster';

const ROOT = resolve(import.meta.dirname, '../..');

/** One engine process of a test site: its own data dir, joined to the site's NATS servers. */
export class SiteEngine {
  child?: ChildProcess;
  url = '';
  token = '';
  private out = '';

  constructor(
    readonly name: string,
    private readonly dataDir: string,
    private readonly servers: readonly string[],
    /** Node's own flags before the entry point (a test's preload). */
    private readonly nodeArgs: readonly string[] = [],
    /** Environment variables of its own (e.g. another VC_ADMIN_PASSWORD). */
    private readonly env: NodeJS.ProcessEnv = {},
    /** More engine flags (e.g. --cluster-ca). */
    private readonly engineArgs: readonly string[] = [],
  ) {}

  /** Starts the engine as an operator does: `engine/cli.ts` with the --cluster flags, as its node's NATS user. */
  async start(): Promise<void> {
    const media = TEST_MEDIA_DIRS.flatMap((dir) => ['--media-dir', dir]);
    const nats = await nodeUserOf(this.servers, this.name);
    const cluster = [
      ...this.servers.flatMap((url) => ['--cluster', url]),
      ...['--cluster-user', nats.user, '--node-name', this.name],
    ];
    const args = [
      '--port',
      '0',
      '--data-dir',
      this.dataDir,
      '--builtin-dir',
      BUILTIN_PACKAGE_DIR,
      ...media,
      ...cluster,
      ...this.engineArgs,
    ];
    const child = spawn(process.execPath, ['--import', 'tsx', ...this.nodeArgs, 'engine/cli.ts', ...args], {
      cwd: ROOT,
      // The cluster's password from the environment (never a flag: ps shows flags).
      env: {
        ...process.env,
        VC_ADMIN_PASSWORD: ADMIN_PASSWORD,
        VC_CLUSTER_PASSWORD: nats.password,
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    // A restart's log starts afresh: the URL is read from it.
    this.out = '';
    const collect = (chunk: Buffer) => {
      this.out = (this.out + chunk.toString()).slice(-200_000);
      if (process.env.VC_SITE_LOGS) appendFileSync(join(process.env.VC_SITE_LOGS, `${this.name}.log`), chunk);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.url = await new Promise<string>((done, fail) => {
      child.stdout?.on('data', () => {
        const match = /engine listening on (http:\/\/\S+)/.exec(this.out);
        if (match?.[1]) done(match[1]);
      });
      child.once('exit', (code) => fail(new Error(`engine ${this.name} exited with ${code}: ${this.out}`)));
    });
    this.token = await signIn(this.url, ADMIN_PASSWORD);
  }

  /** The engine's log so far (JSON lines). */
  get log(): string {
    return this.out;
  }

  signal(name: NodeJS.Signals): void {
    this.child?.kill(name);
  }

  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await terminate(child, 'SIGKILL');
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await terminate(child);
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const answer = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const envelope = (await answer.json()) as { code: number; msg: string; data: T };
    if (envelope.code !== 0)
      throw new Error(`${this.name} ${method} ${path}: ${envelope.code} ${envelope.msg}`);
    return envelope.data;
  }

  dispose(): void {
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** `count` engines joined to the cluster's servers, started one after another (named e1, e2... or as given). */
export async function startSite(nats: NatsCluster, count: number, ...names: string[]): Promise<SiteEngine[]> {
  const engines = Array.from({ length: count }, (_, i) => {
    const name = names[i] ?? `e${i + 1}`;
    return new SiteEngine(name, mkdtempSync(join(tmpdir(), `vc-site-${name}-`)), nats.urls);
  });
  for (const engine of engines) await engine.start();
  return engines;
}

export async function stopSite(engines: readonly SiteEngine[]): Promise<void> {
  await Promise.all(engines.map((engine) => engine.stop()));
  for (const engine of engines) engine.dispose();
}

export type Site = Extract<SiteView, { enabled: true }>;

export const siteOf = (engine: SiteEngine) => engine.call<SiteView>('GET', '/api/cluster') as Promise<Site>;

/** Waits until the task runs on a node other than `from` and analyses frames there; its node. */
export function analysingOff(
  engines: readonly SiteEngine[],
  via: SiteEngine,
  taskId: string,
  from: string,
  timeoutMs = 45_000,
): Promise<string> {
  return settled(
    `task ${taskId} analysing off ${from}`,
    async () => {
      const owner = (await siteOf(via)).assignments[taskId]?.node;
      const engine = engines.find((e) => e.name === owner);
      if (!owner || owner === from || !engine) throw new Error(`task ${taskId} still on ${owner}`);
      const view = await engine.call<TaskView>('GET', `/api/task/${taskId}`);
      if (view.status !== 'running' || view.health.frames_analysed === 0)
        throw new Error(`task ${taskId} on ${owner}: ${view.status}, ${view.health.frames_analysed} frames`);
      return owner;
    },
    timeoutMs,
    100,
  );
}

/** The engine's log lines (pino JSON) whose message matches, with their time (ms since the epoch). */
function logLines(engine: SiteEngine, pattern: RegExp): Array<{ time: number; msg: string }> {
  return engine.log.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    const { time, msg } = JSON.parse(line) as { time: string; msg?: string };
    return msg && pattern.test(msg) ? [{ time: Date.parse(time), msg }] : [];
  });
}

/**
 * How long no node analysed a task that moved to `to`, judged by the nodes' logs: the time `to` first
 * analysed it (warming up, make-before-break) less the time its old node stopped it. Negative: both
 * analysed it for that long. The old node logs its stop a moment after the site shows the handover.
 */
export function analysisGap(engines: readonly SiteEngine[], to: SiteEngine, taskId: string): Promise<number> {
  return settled(
    `the move of ${taskId} to ${to.name} logged`,
    async () => {
      const warm = logLines(to, new RegExp(`analyses task ${taskId}, warming up`)).at(-1);
      // The old owner stops when it sees the reassignment, or first, when its next append is refused.
      const stopped = new RegExp(
        `stopped task ${taskId}: assigned to ${to.name}|task ${taskId} was taken over by`,
      );
      const stops = engines.filter((engine) => engine !== to).flatMap((engine) => logLines(engine, stopped));
      const stop = stops.sort((a, b) => a.time - b.time).at(-1);
      if (warm && stop) return warm.time - stop.time;
      // Said when it times out: a move without a warm-up (its old node judged silent) shows here.
      const runs = logLines(to, new RegExp(`runs task ${taskId}`)).at(-1)?.msg;
      throw new Error(
        `warm-up ${warm ? 'logged' : 'not logged'}, stop ${stop ? 'logged' : 'not logged'}; ${runs ?? 'not run there'}`,
      );
    },
    // A loaded machine (CI runs the process tests side by side) hands over more slowly.
    90_000,
  );
}

/**
 * A camera reading the fixture video with the built-in motion app, started on `engine` (asked again
 * while the site is still settling), with `more` of the start body.
 */
export const fileCamera = (engine: SiteEngine, name: string, more: Record<string, unknown> = {}) =>
  settled(`camera ${name} on ${engine.name}`, () =>
    engine.call<TaskView>('POST', '/api/task', {
      name,
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
      ...more,
    }),
  );

/** A task's event chain as stored in JetStream. */
export interface Chain {
  seqs: number[];
  eventIds: string[];
  /** Where each event lies in VC_EVENTS: its id in the site's event feed. */
  streamSeqs: number[];
  /** The epoch of every entry, in chain order. */
  epochs: number[];
}

/** The tasks' chains, read as a client of the site's NATS servers. */
export async function readChains(
  servers: readonly string[],
  taskIds: readonly string[],
): Promise<Map<string, Chain>> {
  const conn = await connectCluster({ servers, user: NATS_USER, password: NATS_PASSWORD }, 'checker');
  try {
    const result = new Map<string, Chain>();
    for (const id of taskIds) {
      const entries = await readChain(conn, id, 0, 100_000);
      result.set(id, {
        seqs: entries.flatMap(({ entry }) => (entry.kind === 'event' ? [entry.seq] : [])),
        eventIds: entries.flatMap(({ entry }) => (entry.kind === 'event' ? [entry.event_id] : [])),
        streamSeqs: entries.flatMap(({ entry, streamSeq }) => (entry.kind === 'event' ? [streamSeq] : [])),
        epochs: entries.map(({ entry }) => entry.epoch),
      });
    }
    return result;
  } finally {
    await conn.close();
  }
}

/**
 * Each chain gap-free (seqs 1, 2, ...), fenced (epochs only rise: no append of a superseded owner
 * after its successor's claim) and with no event twice.
 */
export function expectChainsSound(chains: ReadonlyMap<string, Chain>, taskIds: readonly string[]): void {
  for (const id of taskIds) {
    const chain = chains.get(id) as Chain;
    expect(chain.seqs, id).toEqual(chain.seqs.map((_, i) => i + 1));
    expect(chain.epochs, id).toEqual([...chain.epochs].sort((a, b) => a - b));
    expect(new Set(chain.eventIds).size, id).toBe(chain.eventIds.length);
  }
}

/** Never one seq of a task with two event_ids among what was sent (a duplicate shares its event_id). */
export function expectOneEventIdPerSeq(
  sent: ReadonlyArray<{ task_id: string; seq: number; event_id: string }>,
): void {
  const bySeq = new Map<string, string>();
  for (const item of sent) {
    const key = `${item.task_id}:${item.seq}`;
    expect(item.event_id, key).toBe(bySeq.get(key) ?? item.event_id);
    bySeq.set(key, item.event_id);
  }
}

/**
 * What of `sent` (callbacks, MQTT messages) the site never chained, judged against the chains read
 * now, after it was sent: the cameras go on meanwhile, so chains read earlier lack the latest events.
 */
export async function unchainedOf<T extends { event_id: string }>(
  servers: readonly string[],
  taskIds: readonly string[],
  sent: readonly T[],
): Promise<T[]> {
  const snapshot = [...sent];
  const chains = await readChains(servers, taskIds);
  const chained = new Set([...chains.values()].flatMap((chain) => chain.eventIds));
  return snapshot.filter((item) => !chained.has(item.event_id));
}

/** Starts a camera on a node: the built-in motion app on an RTMP source, its events to `reportUrl`. */
export function startCamera(
  engine: SiteEngine,
  name: string,
  videoUrl: string,
  reportUrl: string,
): Promise<TaskView> {
  return settled(`camera ${name} on ${engine.name}`, () =>
    engine.call<TaskView>('POST', '/api/task', {
      name,
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: videoUrl,
      report_url: reportUrl,
    }),
  );
}
