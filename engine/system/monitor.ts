import { execFile } from 'node:child_process';
import { readdir, stat, statfs } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism, freemem, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ClipUsage } from '../clips/clip-schema';
import { natsServerVersion } from '../cluster/nats-binary';
import type { SystemInfo } from '../contract/health';
import type { ModelFigures } from '../inference/pool';
import type { ResolvedHwaccel } from '../media/hwaccel';
import { cpuSeconds, rssBytes } from './process-stats';

/** What the machine's view is made of; each part answers for itself. */
export interface MonitorDeps {
  dataDir: string;
  /** The folders file sources may come from. */
  mediaDirs: readonly string[];
  ffmpeg: string;
  /** The NATS server binary this install brings (engine/cluster/nats-binary.ts), null: none. */
  natsServer: string | null;
  version: string;
  /** ms since the Unix epoch when the engine started. */
  startedAt: number;
  now(): number;
  inference: {
    models(): ModelFigures[];
    readonly hostPids: number[];
  };
  outbox: {
    backlog(): { pending: number; oldest_pending_at: number | null };
    readonly refused: { readonly total: number; readonly lastReason: string | null };
  };
  tasks: {
    statusCounts(): Partial<Record<string, number>>;
    readonly clockBreaks: { readonly total: number; readonly lastAt: number | null };
  };
  /** Where new streams decode. */
  decoding(): ResolvedHwaccel;
  clips: { usage(): ClipUsage };
}

/** One answer serves every caller for this long: a console polling it costs nothing more. */
const ANSWER_TTL_MS = 2_000;
/** Walking the data dir is the one costly figure: refreshed at most this often, in the background. */
const DISK_WALK_TTL_MS = 60_000;
/** A data dir walk stops counting after this many entries (the figure is then a lower bound). */
const DISK_WALK_MAX_ENTRIES = 200_000;

/**
 * GET /api/system: CPU, memory, models, versions, disk, outbox and tasks as typed figures. Bounded in
 * cost: the answer is cached for 2 s, the data dir's size is walked at most once a minute.
 */
export class SystemMonitor {
  private answer: { at: number; info: Promise<SystemInfo> } | null = null;
  private cpuSample = { wallMs: performance.now(), cpuS: 0 };
  private dataDirBytes = 0;
  private walkedAt = Number.NEGATIVE_INFINITY;
  private walking: Promise<void> | null = null;
  private ffmpegVersion: Promise<string> | null = null;
  private natsVersion: Promise<string | null> | null = null;

  constructor(private readonly deps: MonitorDeps) {
    this.cpuSample.cpuS = this.engineCpuSeconds();
  }

  read(): Promise<SystemInfo> {
    const now = performance.now();
    if (!this.answer || now - this.answer.at > ANSWER_TTL_MS) this.answer = { at: now, info: this.measure() };
    return this.answer.info;
  }

  private async measure(): Promise<SystemInfo> {
    const { deps } = this;
    const [ffmpeg, natsServer, disk] = await Promise.all([this.ffmpeg(), this.natsServer(), this.disk()]);
    const pids = deps.inference.hostPids;
    const backlog = deps.outbox.backlog();
    const tasks = deps.tasks.statusCounts();
    return {
      cpu: {
        cores: availableParallelism(),
        load_1m: loadavg()[0] ?? 0,
        engine_percent: this.enginePercent(),
      },
      memory: {
        total_bytes: totalmem(),
        free_bytes: freemem(),
        engine_rss_bytes: process.memoryUsage.rss() + pids.reduce((sum, pid) => sum + rssBytes(pid), 0),
      },
      models: deps.inference.models().map((model) => ({
        model: model.name,
        inference_ms: model.inferenceMs,
        queue: model.queued,
        // Before its first frame a model has no session yet: the CPU is where every session can run.
        provider: model.placement?.provider ?? 'cpu',
        provider_fallback: model.placement?.fallback ?? null,
      })),
      versions: {
        engine: deps.version,
        node: process.versions.node,
        ffmpeg,
        onnxruntime: onnxruntimeVersion(),
        nats_server: natsServer,
      },
      disk,
      media_dirs: [...deps.mediaDirs],
      outbox: {
        pending: backlog.pending,
        oldest_age_ms:
          backlog.oldest_pending_at === null ? null : Math.max(0, deps.now() - backlog.oldest_pending_at),
        refused_events: deps.outbox.refused.total,
        last_refusal: deps.outbox.refused.lastReason,
      },
      tasks: {
        running: tasks.running ?? 0,
        stream_lost: tasks.stream_lost ?? 0,
        total: Object.values(tasks).reduce((sum: number, n) => sum + (n ?? 0), 0),
        clock_breaks: deps.tasks.clockBreaks.total,
        last_clock_break_at: deps.tasks.clockBreaks.lastAt,
      },
      decoding: deps.decoding(),
      clips: deps.clips.usage(),
      uptime_s: Math.max(0, (deps.now() - deps.startedAt) / 1000),
    };
  }

  /** The engine's and its inference hosts' CPU since the previous answer, in % of one core. */
  private enginePercent(): number {
    const wallMs = performance.now();
    const cpuS = this.engineCpuSeconds();
    const elapsedS = (wallMs - this.cpuSample.wallMs) / 1000;
    // A host that ended since takes its seconds with it: never below 0.
    const percent = elapsedS > 0 ? Math.max(0, ((cpuS - this.cpuSample.cpuS) / elapsedS) * 100) : 0;
    this.cpuSample = { wallMs, cpuS };
    return percent;
  }

  private engineCpuSeconds(): number {
    const own = process.cpuUsage();
    const hosts = this.deps.inference.hostPids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    return (own.user + own.system) / 1e6 + hosts;
  }

  private async disk(): Promise<SystemInfo['disk']> {
    const fs = await statfs(this.deps.dataDir);
    if (performance.now() - this.walkedAt > DISK_WALK_TTL_MS) {
      this.walking ??= directoryBytes(this.deps.dataDir)
        .then((bytes) => {
          this.dataDirBytes = bytes;
        })
        .finally(() => {
          this.walkedAt = performance.now();
          this.walking = null;
        });
      // Only the first answer waits for the walk; later ones show the last figure meanwhile.
      if (this.walkedAt === Number.NEGATIVE_INFINITY) await this.walking;
    }
    return {
      data_dir_bytes: this.dataDirBytes,
      free_bytes: fs.bavail * fs.bsize,
      total_bytes: fs.blocks * fs.bsize,
    };
  }

  private ffmpeg(): Promise<string> {
    this.ffmpegVersion ??= promisify(execFile)(this.deps.ffmpeg, ['-version'], { timeout: 10_000 }).then(
      ({ stdout }) => /^ffmpeg version (\S+)/.exec(stdout)?.[1] ?? 'unknown',
      () => 'unknown',
    );
    return this.ffmpegVersion;
  }

  /** Asked once: a binary that does not answer is reported as 'unknown', none as null. */
  private natsServer(): Promise<string | null> {
    const binary = this.deps.natsServer;
    if (binary === null) return Promise.resolve(null);
    this.natsVersion ??= promisify(execFile)(binary, ['--version'], { timeout: 10_000 }).then(
      ({ stdout }) => natsServerVersion(stdout) ?? 'unknown',
      () => 'unknown',
    );
    return this.natsVersion;
  }
}

function onnxruntimeVersion(): string {
  try {
    return (createRequire(import.meta.url)('onnxruntime-node/package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Bytes of the files under a folder, links not followed; stops counting after the entry cap. */
async function directoryBytes(root: string): Promise<number> {
  let bytes = 0;
  let entries = 0;
  const folders = [root];
  while (folders.length > 0 && entries < DISK_WALK_MAX_ENTRIES) {
    const folder = folders.pop() as string;
    const items = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const item of items) {
      entries += 1;
      const path = join(folder, item.name);
      if (item.isDirectory()) folders.push(path);
      else if (item.isFile())
        bytes += await stat(path).then(
          (info) => info.size,
          () => 0,
        );
    }
  }
  return bytes;
}
