import type { ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawnOwned } from '../media/owned-child';
import { cpuMsOf } from '../system/process-stats';
import {
  type HostOptions,
  type HostReady,
  type HostReply,
  type HostRequest,
  OVER_MEMORY_MARK,
} from './protocol';
import type { ExecutionProviderSetting } from './providers';
import { requestHead } from './request-stream';

export interface HostLimits {
  /** onnxruntime intra-op threads per session. */
  intraOpThreads: number;
  /** Most memory the host may use, in MB. */
  memoryLimitMb: number;
  /**
   * true: the kernel bounds the host's data memory (Linux, util-linux prlimit), so an allocation
   * past it fails inside onnxruntime. false: the host's own watchdog thread kills it once its
   * resident size passes the bound (every platform; polled every 100 ms, so a fast allocation may
   * overshoot by what it writes in that time).
   */
  kernelMemoryLimit: boolean;
  /** Where its sessions run (providers.ts). */
  provider: ExecutionProviderSetting;
}

const PRLIMIT = '/usr/bin/prlimit';

/**
 * Longest a host may take to start (Node, onnxruntime and, from the source tree, tsx) before it is
 * killed. Start-up is the engine's own cost: a job's deadline only runs once its host is ready.
 */
const START_DEADLINE_MS = 30_000;

/**
 * A job past its deadline on a host that got less than this share of the deadline as CPU time was
 * starved (the machine's cores were busy elsewhere), not stuck: with `stretch`, it may go on...
 */
const STARVED_CPU_SHARE = 0.25;
/** ...up to this many times its deadline. */
export const STARVED_DEADLINE_FACTOR = 3;
/** A starved job is looked at again no sooner than this. */
const STARVED_RECHECK_MS = 250;

export interface RunOptions {
  /**
   * Let the job run past its deadline while its host is starved for CPU (Linux, where a process's
   * CPU time can be read): up to STARVED_DEADLINE_FACTOR times the deadline, as long as the host
   * has had less than a quarter of the deadline in CPU time. Told each time it is let run on.
   */
  stretch?: { onStarved(cpuMs: number, elapsedMs: number): void };
}

/** Whether hosts can start under a kernel memory limit here. */
export function kernelMemoryLimitAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    accessSync(PRLIMIT, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a host ended a job without answering it. 'unavailable': the host never got ready or had
 * ended before the job, which is not the job's fault.
 */
export type FailureCause = 'time' | 'memory' | 'crash' | 'closed' | 'unavailable';

export class HostFailure extends Error {
  override name = 'HostFailure';

  constructor(
    readonly failure: FailureCause,
    message: string,
  ) {
    super(message);
  }
}

interface Running {
  id: number;
  resolve: (reply: HostReply) => void;
  reject: (error: HostFailure) => void;
  deadlineMs: number;
  stretch: RunOptions['stretch'];
  /** The deadline, armed once the host is ready. */
  timer?: NodeJS.Timeout;
  /** When the deadline was armed, and the host's CPU time then (null: unknown, never stretched). */
  armedAt?: number;
  cpuAtArm?: number | null;
}

/**
 * One inference host process (worker.ts) as the engine sees it: one job at a time, each under a
 * deadline counted from when the host is ready, past which the host is killed. The host dies with
 * the engine (setpriv's parent-death signal on Linux; its stdin closing elsewhere) and starts under
 * the memory bound before it loads any model.
 */
export class InferenceHost {
  private readonly child: ChildProcess;
  private job: Running | null = null;
  /** Set when the engine kills the host: the reason the job in flight fails with. */
  private killedFor: FailureCause | null = null;
  /** The host's memory watchdog said it is killing it. */
  private overMemory = false;
  private ready = false;
  private readonly startTimer: NodeJS.Timeout;
  private gone = false;
  readonly exited: Promise<void>;

  constructor(limits: HostLimits) {
    this.child = startHost(limits);
    // A host that died mid-write fails its job when it is gone; the write error says nothing more.
    this.child.stdin?.on('error', () => undefined);
    this.startTimer = setTimeout(() => this.kill('unavailable'), START_DEADLINE_MS);
    this.child.on('message', (message: HostReply | HostReady) =>
      'ready' in message ? this.onReady() : this.onReply(message),
    );
    this.child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.includes(OVER_MEMORY_MARK)) this.overMemory = true;
    });
    this.exited = new Promise((done) => {
      const end = (how: string) => {
        if (this.gone) return;
        this.gone = true;
        clearTimeout(this.startTimer);
        this.failJob(how);
        done();
      };
      // 'close', not 'exit': the watchdog's word on stdout is read by then.
      this.child.once('close', (code, signal) =>
        end(signal ? `killed by ${signal}` : `exited with code ${code}`),
      );
      this.child.once('error', (error) => end(`could not start: ${error.message}`));
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The process is gone (killed, crashed or closed): it takes no more jobs. */
  get ended(): boolean {
    return this.gone;
  }

  /**
   * Sends a request (with the frame's pixels for a detection) and resolves with the host's answer.
   * Rejects with a HostFailure when the deadline passes (the host is killed), the host runs out of
   * memory (killed too: onnxruntime keeps what it allocated) or it dies.
   */
  run(
    request: HostRequest,
    pixels: Uint8Array | null,
    deadlineMs: number,
    options: RunOptions = {},
  ): Promise<HostReply> {
    if (this.job) return Promise.reject(new Error('the inference host is already running a job'));
    if (this.gone) return Promise.reject(new HostFailure('unavailable', 'it has ended'));
    return new Promise((resolve, reject) => {
      const job: Running = { id: request.id, resolve, reject, deadlineMs, stretch: options.stretch };
      this.job = job;
      if (this.ready) this.arm(job);
      // A host still starting reads the request once it is up.
      const stdin = this.child.stdin;
      stdin?.cork();
      stdin?.write(requestHead(request));
      // Written from the frame's own memory, shared or not: the caller keeps it until the answer.
      if (pixels) stdin?.write(pixels);
      stdin?.uncork();
    });
  }

  /**
   * Asks the host to end once its job is done; kills it when it has not within graceMs. Resolves
   * when it is gone.
   */
  async close(graceMs: number): Promise<void> {
    if (this.gone) return;
    const timer = setTimeout(() => this.kill('closed'), graceMs);
    this.child.stdin?.end();
    await this.exited;
    clearTimeout(timer);
  }

  private onReady(): void {
    clearTimeout(this.startTimer);
    this.ready = true;
    if (this.job) this.arm(this.job);
  }

  private arm(job: Running): void {
    job.armedAt = performance.now();
    job.cpuAtArm = job.stretch ? cpuMsOf(this.child.pid) : null;
    job.timer = setTimeout(() => this.expire(job), job.deadlineMs);
  }

  /**
   * The deadline passed. Timers run before the I/O that came in meanwhile is read, so a reply that
   * arrived while the engine's loop was busy is taken first; a starved host may go on (RunOptions).
   */
  private expire(job: Running): void {
    setImmediate(() => {
      if (this.job !== job) return;
      const more = this.starvedMs(job);
      if (more > 0) job.timer = setTimeout(() => this.expire(job), more);
      else this.kill('time');
    });
  }

  /** How long a job past its deadline may go on before it is looked at again; 0: it is over. */
  private starvedMs(job: Running): number {
    const { stretch, cpuAtArm, armedAt } = job;
    const cpu = cpuMsOf(this.child.pid);
    if (!stretch || cpuAtArm == null || armedAt === undefined || cpu === null) return 0;
    const used = cpu - cpuAtArm;
    const elapsed = performance.now() - armedAt;
    const cpuNeeded = job.deadlineMs * STARVED_CPU_SHARE - used;
    const left = job.deadlineMs * STARVED_DEADLINE_FACTOR - elapsed;
    if (cpuNeeded <= 0 || left <= 0) return 0;
    stretch.onStarved(used, elapsed);
    // It cannot have had the CPU it lacks in less wall time than that.
    return Math.min(left, Math.max(STARVED_RECHECK_MS, cpuNeeded));
  }

  private kill(cause: FailureCause): void {
    if (this.gone) return;
    this.killedFor ??= cause;
    this.child.kill('SIGKILL');
  }

  private onReply(reply: HostReply): void {
    const job = this.job;
    if (!job || job.id !== reply.id) return;
    if ('outOfMemory' in reply && reply.outOfMemory) {
      // The job fails as a memory overrun when the host is gone (failJob).
      this.kill('memory');
      return;
    }
    clearTimeout(job.timer);
    this.job = null;
    job.resolve(reply);
  }

  private failJob(how: string): void {
    const job = this.job;
    if (!job) return;
    clearTimeout(job.timer);
    this.job = null;
    const cause = this.causeOf();
    const message = this.killedFor === 'unavailable' ? `not ready within ${START_DEADLINE_MS / 1000} s` : how;
    job.reject(new HostFailure(cause, message));
  }

  /** A host that ended before it was ready failed to start, whatever its job. */
  private causeOf(): FailureCause {
    if (this.killedFor) return this.killedFor;
    if (!this.ready) return 'unavailable';
    return this.overMemory ? 'memory' : 'crash';
  }
}

function startHost(limits: HostLimits): ChildProcess {
  const options: HostOptions = {
    intraOpThreads: limits.intraOpThreads,
    watchdogMb: limits.kernelMemoryLimit ? 0 : limits.memoryLimitMb,
    provider: limits.provider,
  };
  const args = [...hostEntry(), JSON.stringify(options)];
  const spawnOptions = {
    // Requests on stdin, answers on the IPC channel, the memory watchdog's word on stdout, and
    // onnxruntime's warnings on the engine's stderr.
    stdio: ['pipe', 'pipe', 'inherit', 'ipc'] as ('pipe' | 'inherit' | 'ipc')[],
    // Inside Electron, execPath is the app: this makes it a plain Node.js for the host.
    env: process.versions.electron ? { ...process.env, ELECTRON_RUN_AS_NODE: '1' } : process.env,
  };
  if (!limits.kernelMemoryLimit) return spawnOwned(process.execPath, args, spawnOptions);
  // RLIMIT_DATA, not RLIMIT_AS: V8 reserves far more address space than it ever uses (Electron's
  // sandbox terabytes), while data memory is what is written to; Node and onnxruntime boot in ~130 MB.
  const bytes = limits.memoryLimitMb * 1024 * 1024;
  return spawnOwned(PRLIMIT, [`--data=${bytes}:${bytes}`, '--', process.execPath, ...args], spawnOptions);
}

/**
 * From the source tree (tsx, vitest) the host is TypeScript, run through tsx's loader; a bundled
 * build ships it compiled as inference-worker.js beside the bundle.
 */
function hostEntry(): string[] {
  const self = import.meta.url;
  if (!self.endsWith('.ts')) return [fileURLToPath(new URL('./inference-worker.js', self))];
  const tsxDir = dirname(createRequire(self).resolve('tsx/package.json'));
  const loader = pathToFileURL(join(tsxDir, 'dist', 'loader.mjs')).href;
  return ['--import', loader, fileURLToPath(new URL('./worker.ts', self))];
}
