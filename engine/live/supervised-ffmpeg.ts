import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { type Clock, systemClock, type TimerHandle } from '../clock';
import type { FfmpegHealth } from '../contract/health';
import { StderrTail } from '../media/frame-source';
import { spawnOwned } from '../media/owned-child';
import { ReconnectBackoff } from '../media/reconnect-policy';

/** connecting (started, output not up yet) -> live; retrying after a death; stopped by stop(). */
export type SupervisedState = 'idle' | 'connecting' | 'live' | 'retrying' | 'stopped';

export interface SupervisedOptions {
  ffmpeg: string;
  /** The arguments of each attempt (a restart may continue a numbering). */
  args(): string[] | Promise<string[]>;
  /** Working folder: HLS outputs use relative names, so no path needs escaping in a tee muxer. */
  cwd?: string;
  /** Pipe the child's stdin (write()) and stdout ('data' events); otherwise they are closed. */
  stdin?: boolean;
  stdout?: boolean;
  /** Pipe a fourth stream (fd 3, ffmpeg's `pipe:3`) to 'extra' events: a second output. */
  extraOutput?: boolean;
  /** A line of ffmpeg's stderr that means the output is up; else the owner calls markLive(). */
  liveWhen?: RegExp;
  /** Bytes allowed to wait for the child's stdin; write() refuses more. */
  maxBufferedBytes?: number;
  /** Runs the restart backoff. Default systemClock. */
  clock?: Clock;
}

export interface SupervisedEvents {
  /** Bytes from the child's stdout. */
  data: [Buffer];
  /** Bytes from the child's fd 3 (extraOutput). */
  extra: [Buffer];
  /** A new process started: its outputs begin afresh. */
  spawned: [];
  /** The process's output came up (markLive). */
  live: [];
}

/** How long stop() waits after SIGTERM (ffmpeg finishing its files) before SIGKILL. */
const STOP_GRACE_MS = 2_000;

/**
 * One ffmpeg that is kept running: when it dies it is started again after a backoff (1 s doubling
 * to 30 s, reconnect-policy.ts), without its owner doing anything. Owned (dies with the engine); the state and ffmpeg's
 * last error are there for the task's dump.
 */
export class SupervisedFfmpeg extends EventEmitter<SupervisedEvents> {
  private child: ChildProcess | null = null;
  private current: SupervisedState = 'idle';
  /** Restarts wait as reconnects do (reconnect-policy.ts), afresh once live. */
  private readonly backoff = new ReconnectBackoff();
  private readonly clock: Clock;
  private retryTimer: TimerHandle | null = null;
  private retryAt = 0;
  private stderr = new StderrTail();
  private exited: Promise<void> = Promise.resolve();
  /** Why the last attempt ended; '' until one did. */
  lastError = '';

  constructor(private readonly options: SupervisedOptions) {
    super();
    this.clock = options.clock ?? systemClock;
  }

  get state(): SupervisedState {
    return this.current;
  }

  start(): void {
    if (this.current !== 'idle') throw new Error(`start() in state ${this.current}`);
    void this.spawn();
  }

  /** The owner saw the output come up (e.g. a playlist was written): the backoff starts afresh. */
  markLive(): void {
    if (this.current !== 'connecting') return;
    this.backoff.reset();
    this.current = 'live';
    this.emit('live');
  }

  /**
   * Queues bytes for the child's stdin; false (nothing queued) while it is down or when its backlog
   * is full. The callback runs once the bytes are handed over, or dropped with the child.
   */
  write(chunk: Uint8Array, done?: () => void): boolean {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || (this.current !== 'connecting' && this.current !== 'live')) return false;
    if (stdin.writableLength > (this.options.maxBufferedBytes ?? Number.POSITIVE_INFINITY)) return false;
    stdin.write(chunk, done && (() => done()));
    return true;
  }

  /** Bytes waiting for the child's stdin. */
  get backlog(): number {
    return this.child?.stdin?.writableLength ?? 0;
  }

  /** Ends the running attempt as failed (e.g. it stopped taking data); the backoff restarts it. */
  kill(reason: string): void {
    if (!this.child || this.current === 'stopped') return;
    this.stderr.addLine(reason, 'error');
    this.child.kill('SIGKILL');
  }

  /** Stops for good: SIGTERM (ffmpeg finishes its files), SIGKILL after the grace. Resolves once gone. */
  stop(): Promise<void> {
    if (this.current === 'stopped') return this.exited;
    this.current = 'stopped';
    if (this.retryTimer) this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      child.kill('SIGTERM');
      // Real time, not the clock: it guards a real process, whose exit clears it.
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      void this.exited.then(() => clearTimeout(killer));
    }
    return this.exited;
  }

  /** Its state as figures: the task's health shows them, the dump line is rendered from them. */
  health(): FfmpegHealth {
    const retryInS =
      this.current === 'retrying' ? Math.max(0, Math.ceil((this.retryAt - this.clock.now()) / 1000)) : null;
    return { state: this.current, last_error: this.lastError || null, retry_in_s: retryInS };
  }

  private async spawn(): Promise<void> {
    this.retryTimer = null;
    const args = await this.options.args();
    if (this.current === 'stopped') return;
    this.stderr = new StderrTail();
    const { stdin, stdout, extraOutput, cwd } = this.options;
    const child = spawnOwned(this.options.ffmpeg, args, {
      cwd,
      stdio: [
        stdin ? 'pipe' : 'ignore',
        stdout ? 'pipe' : 'ignore',
        'pipe',
        ...(extraOutput ? ['pipe' as const] : []),
      ],
    });
    this.emit('spawned');
    this.child = child;
    this.current = 'connecting';
    this.exited = new Promise((resolve) => {
      child.on('close', (code, signal) => {
        this.stderr.end();
        this.onClose(child, code, signal);
        resolve();
      });
    });
    // A spawn failure still ends in 'close'; its reason is kept for the exit.
    child.on('error', (error) => this.stderr.addLine(error.message, 'error'));
    // EPIPE when the child dies mid-write: its exit says why.
    (child.stdin as Writable | null)?.on('error', () => {});
    (child.stdout as Readable | null)?.on('data', (chunk: Buffer) => this.emit('data', chunk));
    (child.stdio[3] as Readable | undefined)?.on('data', (chunk: Buffer) => this.emit('extra', chunk));
    (child.stderr as Readable).on('data', (chunk: Buffer) => {
      for (const line of this.stderr.push(chunk)) {
        if (this.options.liveWhen?.test(line.trim())) this.markLive();
      }
    });
  }

  private onClose(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== this.child) return;
    this.child = null;
    if (this.current === 'stopped') return;
    this.lastError =
      this.stderr.lastError || this.stderr.lastLine || `ffmpeg exited with ${signal ?? `code ${code}`}`;
    const delay = this.backoff.next();
    this.retryAt = this.clock.now() + delay;
    this.current = 'retrying';
    this.retryTimer = this.clock.setTimeout(() => void this.spawn(), delay);
  }
}
