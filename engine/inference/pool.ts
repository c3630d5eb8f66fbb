import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { OVERLOAD_HOLD_MS, overloadSeconds } from '../system/loop-lag';
import type { Detection, Frame } from '../vision/types';
import { ModelChecker } from './checker';
import { HostFailure, type HostLimits, InferenceHost, kernelMemoryLimitAvailable } from './host';
import type {
  ChangeMapReply,
  ChangeMapRequest,
  DetectReply,
  DetectRequest,
  DetectTiming,
  FailedReply,
  OnnxModelRef,
  Placement,
} from './protocol';
import type { ExecutionProviderSetting } from './providers';
import { Quarantine } from './quarantine';

export interface PoolOptions {
  /** Inference host processes; each holds its own session of every model it has run. Default: one per core. */
  workers: number;
  /** onnxruntime intra-op threads per session. With one host per core, 1 avoids oversubscription. */
  intraOpThreads: number;
  /**
   * Longest one frame may take on a host once the host has loaded its model, in ms. Default 10 s. A
   * host starved for CPU (it had less than a quarter of that in CPU time) gets up to three times as
   * long (host.ts, Linux): a busy machine is not a hung model.
   */
  detectDeadlineMs: number;
  /**
   * Longest a model check may take (process start and load included), in ms; a model's first
   * frame on a host, which loads it, gets as long. Default 30 s.
   */
  checkDeadlineMs: number;
  /** Memory bound of each host and each check, in MB. Default 2048. */
  memoryLimitMb: number;
  /**
   * How long a model that overran a host has its frames refused, in ms; twice as long each time it
   * overruns again, up to 16 times. Default 60 s.
   */
  quarantineMs: number;
  /** Most model checks waiting behind the one running; more are refused (ChecksBusyError). Default 2. */
  maxWaitingChecks: number;
  /** Bound memory in the kernel (Linux with prlimit) rather than by a watchdog. Default: where available. */
  kernelMemoryLimit: boolean;
  /** Where sessions run (providers.ts); a provider that is missing falls back to the CPU. Default auto. */
  provider: ExecutionProviderSetting;
  /** Told once per model that runs elsewhere than the setting asked, and why. */
  onFallback?: (model: string, reason: string) => void;
}

export const POOL_DEFAULTS = {
  intraOpThreads: 1,
  detectDeadlineMs: 10_000,
  checkDeadlineMs: 30_000,
  memoryLimitMb: 2048,
  quarantineMs: 60_000,
  maxWaitingChecks: 2,
  provider: 'auto',
} as const;

/** Weight of the newest frame in a model's moving mean of inference time (about the last 10 frames). */
const MEAN_WEIGHT = 0.1;

/** How long close() lets hosts finish the frames they run before it kills them. */
const CLOSE_GRACE_MS = 2_000;

export interface DetectResult {
  detections: Detection[];
  /** The same frame: its pixels were copied to the host, never handed over. */
  frame: Frame;
  timing: DetectTiming;
}

/** One model's figures for GET /api/system. */
export interface ModelFigures {
  name: string;
  /** Where it runs; null before its first frame. */
  placement: Placement | null;
  /** Recent mean inference time; null before its first frame. */
  inferenceMs: number | null;
  queued: number;
}

/** A change model's answer on one tile pair: its probabilities of change, 0..255 per pixel. */
export interface ChangeMapResult {
  changeMap: Uint8Array;
  timing: DetectTiming;
}

type AnsweredReply = Exclude<DetectReply | ChangeMapReply, FailedReply>;

/** A request waiting for a host, with the pixels that follow it (a frame, or a tile pair). */
interface Job {
  model: OnnxModelRef;
  request: Omit<DetectRequest, 'id'> | Omit<ChangeMapRequest, 'id'>;
  pixels: Uint8Array;
  /** When its frame arrived (performance.now()): jobs are served oldest first. */
  due: number;
  resolve: (reply: AnsweredReply) => void;
  reject: (error: Error) => void;
}

interface Slot {
  host: InferenceHost;
  job?: Job;
  /** Models this host has loaded: their frames get the detection deadline, others the check's. */
  loaded: Set<string>;
}

const closedError = () => new Error('the inference pool is closed');

/**
 * Runs ONNX detections in inference host processes, so the API's event loop never waits for a model
 * and a model that runs for ever, takes all memory or crashes costs one host, never the engine.
 * Jobs wait in one queue, served by when their frames arrived: a task's frame that waited behind
 * its previous one goes before frames that came after it, so a stream falling behind in a burst is
 * not sent to the back each frame. Each task keeps at most two jobs in flight (its pipeline awaits
 * the result), so the queue is bounded by the number of streams.
 */
export class InferencePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private readonly quarantine: Quarantine;
  /** Models that have finished a frame: only these may run on several hosts at once. */
  private readonly proven = new Set<string>();
  private readonly checker: ModelChecker;
  private readonly hostLimits: HostLimits;
  private readonly options: PoolOptions;
  /** Per model key: a moving mean of its inference time, for GET /api/system. */
  private readonly meanMs = new Map<string, number>();
  /** Per model key: its name in those figures. */
  private readonly names = new Map<string, string>();
  /** Per model key: where its sessions run, as the last frame's host said. */
  private readonly placements = new Map<string, Placement>();
  private nextId = 1;
  private closed = false;
  /** The last frame let run past its deadline because its host was starved for CPU, and when. */
  private starvedFrame = { at: Number.NEGATIVE_INFINITY, reason: '' };
  completed = 0;
  failures = 0;

  constructor(options: Partial<PoolOptions> = {}) {
    this.options = {
      ...POOL_DEFAULTS,
      workers: Math.max(1, availableParallelism()),
      kernelMemoryLimit: kernelMemoryLimitAvailable(),
      ...options,
    };
    const { intraOpThreads, memoryLimitMb, kernelMemoryLimit, provider } = this.options;
    this.hostLimits = { intraOpThreads, memoryLimitMb, kernelMemoryLimit, provider };
    this.quarantine = new Quarantine(this.options.quarantineMs);
    // A check takes one core at most, beside the hosts that serve tasks.
    this.checker = new ModelChecker(
      // On the CPU: a check runs a model once, and must not take GPU memory from the tasks' hosts.
      { ...this.hostLimits, intraOpThreads: 1, provider: 'cpu' },
      { deadlineMs: this.options.checkDeadlineMs, maxWaiting: this.options.maxWaitingChecks },
    );
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Each model that ran or waits: its recent mean inference time (null before a frame) and queue. */
  models(): ModelFigures[] {
    const keys = new Set([...this.meanMs.keys(), ...this.queue.map((job) => job.model.key)]);
    return [...keys].map((key) => ({
      name: this.names.get(key) ?? key,
      placement: this.placements.get(key) ?? null,
      inferenceMs: this.meanMs.get(key) ?? null,
      queued: this.queue.filter((job) => job.model.key === key).length,
    }));
  }

  /** Process ids of the running inference hosts: their CPU and memory are the engine's. */
  get hostPids(): number[] {
    return this.slots.flatMap((slot) => (slot.host.ended || !slot.host.pid ? [] : [slot.host.pid]));
  }

  /**
   * Why inference counts as starved for CPU: a frame ran past its deadline on a starved host within
   * the last OVERLOAD_HOLD_MS. Null otherwise.
   */
  get starved(): string | null {
    return performance.now() - this.starvedFrame.at <= OVERLOAD_HOLD_MS ? this.starvedFrame.reason : null;
  }

  /** True when a job sent now would start at once on a host that has nothing else to do. */
  get idle(): boolean {
    if (this.closed || this.queue.length > 0) return false;
    return this.slots.length < this.options.workers || this.slots.some((slot) => !slot.job);
  }

  /** `due`: when the frame arrived (performance.now()), which orders it in the queue; default now. */
  async detect(model: OnnxModelRef, frame: Frame, due = performance.now()): Promise<DetectResult> {
    const { width, height, data } = frame;
    const request = { kind: 'detect' as const, model, width, height, bytes: data.byteLength };
    const reply = (await this.submit(model, request, data, due)) as Exclude<DetectReply, FailedReply>;
    return { detections: reply.detections, frame, timing: reply.timing };
  }

  /**
   * A change model (siamese-change) on one tile pair of its input size: `pair` holds image A's
   * packed RGB, then image B's.
   */
  async changeMap(
    model: OnnxModelRef,
    pair: Uint8Array,
    width: number,
    height: number,
  ): Promise<ChangeMapResult> {
    const request = { kind: 'change-map' as const, model, width, height, bytes: pair.byteLength };
    const reply = (await this.submit(model, request, pair)) as Exclude<ChangeMapReply, FailedReply>;
    return { changeMap: new Uint8Array(Buffer.from(reply.changeMap, 'base64')), timing: reply.timing };
  }

  private submit(
    model: OnnxModelRef,
    request: Job['request'],
    pixels: Uint8Array,
    due = performance.now(),
  ): Promise<AnsweredReply> {
    if (this.closed) return Promise.reject(closedError());
    const refusal = this.quarantine.refusal(model.key);
    if (refusal) {
      this.failures += 1;
      return Promise.reject(new Error(refusal));
    }
    this.names.set(model.key, model.name ?? model.key);
    return new Promise((resolve, reject) => {
      // Hosts start with the first frame: an engine without ONNX models never pays for them.
      while (this.slots.length < this.options.workers)
        this.slots.push({ host: new InferenceHost(this.hostLimits), loaded: new Set() });
      this.queue.push({ model, request, pixels, due, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Loads the model in a short-lived process of its own, runs it once and compares its output with
   * the family and the number of labels: resolves with the problem in plain words (an overrun of
   * time or memory included), or null when it fits. Rejects with ChecksBusyError when too many
   * checks wait already, with CheckCancelledError once `signal` aborts (the check is dropped).
   */
  checkModel(model: OnnxModelRef, labels: number, signal?: AbortSignal): Promise<string | null> {
    if (this.closed) return Promise.reject(closedError());
    return this.checker.check(model, labels, signal);
  }

  /**
   * Refuses new work and lets hosts finish the frames they run for a short while, then kills what
   * is left: done within a few seconds whatever a model is doing.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(closedError());
    await Promise.all([this.checker.close(), ...this.slots.map((slot) => slot.host.close(CLOSE_GRACE_MS))]);
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.closed || slot.job) continue;
      const job = this.nextJob();
      if (!job) return;
      // A host that ended (killed for an overrun, or crashed) is replaced when there is work for
      // it, so one that cannot even start fails frames rather than respawning in a loop.
      if (slot.host.ended) {
        slot.host = new InferenceHost(this.hostLimits);
        slot.loaded = new Set();
      }
      this.start(slot, job);
    }
  }

  /**
   * The oldest waiting job (by due, then by when it was queued) that may start now; jobs of held-back
   * models fail on the way. A model that has not finished a frame yet runs on one host at a time, so
   * a model that hangs from its first frame costs one host until its deadline, never every host.
   */
  private nextJob(): Job | undefined {
    let next = -1;
    for (let i = 0; i < this.queue.length; ) {
      const job = this.queue[i] as Job;
      const { key } = job.model;
      const refusal = this.quarantine.refusal(key);
      if (refusal) {
        this.queue.splice(i, 1);
        this.failures += 1;
        job.reject(new Error(refusal));
        continue;
      }
      const runnable = this.proven.has(key) || !this.slots.some((slot) => slot.job?.model.key === key);
      if (runnable && (next < 0 || job.due < (this.queue[next] as Job).due)) next = i;
      i += 1;
    }
    return next < 0 ? undefined : this.queue.splice(next, 1)[0];
  }

  private start(slot: Slot, job: Job): void {
    slot.job = job;
    const { model } = job;
    const { host, loaded } = slot;
    const request = { ...job.request, id: this.nextId++ };
    const deadline = loaded.has(model.key) ? this.options.detectDeadlineMs : this.options.checkDeadlineMs;
    const stretch = {
      onStarved: (cpuMs: number, elapsedMs: number) => {
        const reason = `an inference host had ${overloadSeconds(cpuMs)} s of CPU in ${overloadSeconds(elapsedMs)} s of a frame`;
        this.starvedFrame = { at: performance.now(), reason };
      },
    };
    host
      .run(request, job.pixels, deadline, { stretch })
      .then(
        (reply) => {
          const answer = reply as DetectReply | ChangeMapReply;
          if ('error' in answer) {
            this.failures += 1;
            job.reject(new Error(answer.error));
            return;
          }
          loaded.add(model.key);
          this.proven.add(model.key);
          this.place(model, answer.placement);
          this.completed += 1;
          const mean = this.meanMs.get(model.key);
          const ms = answer.timing.inferenceMs;
          this.meanMs.set(model.key, mean === undefined ? ms : mean + MEAN_WEIGHT * (ms - mean));
          job.resolve(answer);
        },
        (error: Error) => {
          this.failures += 1;
          job.reject(this.overrun(model, error, deadline));
        },
      )
      .finally(() => {
        slot.job = undefined;
        this.dispatch();
      });
  }

  private place(model: OnnxModelRef, placement: Placement): void {
    const before = this.placements.get(model.key);
    this.placements.set(model.key, placement);
    if (placement.fallback !== null && before?.fallback !== placement.fallback)
      this.options.onFallback?.(model.name ?? model.key, placement.fallback);
  }

  /** The error a frame fails with when its host ended; a model that overran the host is held back. */
  private overrun(model: OnnxModelRef, error: Error, deadlineMs: number): Error {
    if (!(error instanceof HostFailure)) return error;
    if (error.failure === 'closed') return closedError();
    if (error.failure === 'unavailable')
      return new Error(`the inference host could not run it (${error.message})`);
    const name = `model ${basename(model.file)}`;
    const reasons = {
      time: `${name} did not finish a frame within ${deadlineMs / 1000} s`,
      memory: `${name} needed more than ${this.options.memoryLimitMb} MB of memory`,
      crash: `${name} crashed its inference host (${error.message})`,
    };
    return new Error(this.quarantine.hold(model.key, reasons[error.failure]));
  }
}
