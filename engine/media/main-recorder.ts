import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import type { RecordingSource } from '../clips/clip-buffers';
import { type SegmentTarget, segmentOutputArgs } from '../clips/segment-output';
import { type Clock, systemClock, type TimerHandle } from '../clock';
import { engineLoopLag } from '../system/loop-lag';
import type { PixelSize } from './analysis-size';
import { findFfmpeg } from './ffmpeg';
import {
  DEFAULT_FPS,
  newMediaLine,
  type RecordError,
  StderrTail,
  sourceInputArgs,
  videoStreamFormat,
  videoStreamFps,
  videoStreamSize,
} from './frame-source';
import { spawnOwned } from './owned-child';
import { QUICK_START_ARGS } from './quick-start';
import { ReconnectBackoff, type ReconnectPolicy } from './reconnect-policy';
import { sourceRefusal } from './source-limits';
import type { SourceUrl } from './source-url';
import { StallDetector } from './stall-detector';

export interface MainRecorderOptions {
  ffmpeg?: string;
  /** Frames of more pixels are refused (the same cap as a decoded source's). */
  maxPixels?: number;
  /** Files only: play at this multiple of real time, as the analysed source does. */
  readRate?: number;
  /** Where each run copies the stream for clips (ClipBuffers.target); undefined while recording is off. */
  record?: () => SegmentTarget | undefined;
  /** Each run, once started, is the task's recording (ClipBuffers.follow). */
  follow?: (run: number, source: RecordingSource) => void;
  /** Waits between runs after one ended on its own. */
  reconnectPolicy?: () => ReconnectPolicy;
  clock?: Clock;
  stopGraceMs?: number;
}

export interface MainStreamInfo {
  /** The main stream's own size: where every coordinate of the task lies. */
  source: PixelSize;
  fps: number;
}

export interface MainRecorderEvents {
  /** A run described the stream (each run, the first included). */
  described: [MainStreamInfo];
  /** A run ended on its own (the stream dropped): the next starts after the backoff. */
  ended: [reason: string];
}

/**
 * ffmpeg's recording output could not start (it is output #0 here, there being no frames output),
 * or could not write (a full disk): as frame-source.ts reads them for its output #2.
 */
const RECORD_OUTPUT_FAILED =
  /^(Could not write header for output file #0 |Error initializing output stream 0:)/;
const RECORD_WRITE_FAILED = /No space left on device/;
const DEFAULT_STOP_GRACE_MS = 1_000;

/**
 * The main stream of a task that analyses its sub-stream (issue 36): one ffmpeg that reads the main
 * stream and copies its packets into the task's clip segments without decoding a frame (or, while
 * clip recording is off, copies them to nowhere, which still says the stream's size and that it
 * flows). It tells the main stream's size (its coordinates are the task's) and is run again, after
 * the reconnect backoff, whenever it ends on its own.
 */
export class MainRecorder extends EventEmitter<MainRecorderEvents> implements RecordingSource {
  private child: ChildProcess | null = null;
  private stderr = new StderrTail();
  private described: MainStreamInfo | null = null;
  private inputCodec: string | null = null;
  private recordFailure: RecordError | null = null;
  private refusal: Error | null = null;
  private runNumber = 0;
  private exited: Promise<void> = Promise.resolve();
  private closed = false;
  private timer: TimerHandle | null = null;
  private readonly backoff: ReconnectBackoff;
  private readonly clock: Clock;
  private running = false;
  private ends = 0;
  private endedWith: string | null = null;
  /**
   * A stream that stops sending while its connection stays open (a camera's encoder hung, an RTMP
   * publisher gone from a relay) ends no run by itself: the run is ended when no packet was copied
   * for a while, as the analysed stream's watchdog does with frames.
   */
  private readonly stall: StallDetector;
  private stalled: string | null = null;
  /** ffmpeg's -progress report: the output time copied so far this run, and an unfinished line. */
  private copiedUs = -1;
  private progressTail = '';

  constructor(
    readonly source: SourceUrl,
    private readonly options: MainRecorderOptions = {},
  ) {
    super();
    this.clock = options.clock ?? systemClock;
    this.backoff = new ReconnectBackoff(options.reconnectPolicy);
    // A stall (no packet copied for 3 s once the stream was described) is timed in real time, as
    // packets come in, whatever the lifecycle clock does (watchdog-types.ts's streamClock).
    this.stall = new StallDetector(systemClock, {
      fps: () => this.described?.fps ?? DEFAULT_FPS,
      onStall: (windowMs) => {
        this.stalled = `no packet of the main stream for ${windowMs / 1000} s`;
        this.child?.kill('SIGKILL');
      },
      stolenMs: () => engineLoopLag().stolenMs(),
    });
  }

  /**
   * Starts the first run; resolves with the stream's size once ffmpeg described it, rejects with
   * ffmpeg's error when it ended first or nothing came within the timeout (nothing runs then).
   */
  start(timeoutMs: number): Promise<MainStreamInfo> {
    return new Promise((resolve, reject) => {
      // Real time, as a watchdog's start timeout: the time the stream comes in, not the lifecycle clock.
      const timer = setTimeout(
        () => fail(`no description of the stream within ${timeoutMs / 1000} s`),
        timeoutMs,
      );
      const fail = (reason: string) => {
        this.off('described', done);
        this.off('ended', fail);
        clearTimeout(timer);
        void this.close().then(() => reject(this.refusal ?? new Error(reason)));
      };
      const done = (info: MainStreamInfo) => {
        this.off('ended', fail);
        clearTimeout(timer);
        resolve(info);
      };
      this.once('described', done);
      this.once('ended', fail);
      this.run();
    });
  }

  /** The stream's size and rate as the latest run described them; null before. */
  get info(): MainStreamInfo | null {
    return this.described;
  }

  /** Whether a run is going now (not between runs after the stream dropped). */
  get alive(): boolean {
    return this.running;
  }

  /** Whether the stream is read now: a run is going and has described it. */
  get flowing(): boolean {
    return this.running && this.inputCodec !== null;
  }

  /** Runs that ended on their own (the stream dropped), and why the last did; null until one did. */
  get drops(): { count: number; lastError: string | null } {
    return { count: this.ends, lastError: this.endedWith };
  }

  get codec(): string | null {
    return this.inputCodec;
  }

  get recordError(): RecordError | null {
    return this.recordFailure;
  }

  /** Why the last run ended; '' until one did. */
  get lastError(): string {
    return this.refusal?.message || this.stderr.lastError || this.stderr.lastLine;
  }

  /** The running ffmpeg's process id (benchmarks measure its CPU); undefined between runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The running ffmpeg's arguments (for tests: it must decode nothing). */
  args(target: SegmentTarget | undefined): string[] {
    // -progress: what has been copied, twice a second, on stdout (the stall check reads it).
    const args = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'level+info', '-progress', 'pipe:1'];
    if (this.source.kind !== 'file' && !target?.fullProbe) args.push(...QUICK_START_ARGS);
    args.push(...sourceInputArgs(this.source, this.options));
    if (target) args.push(...segmentOutputArgs(target, this.runNumber));
    else args.push('-map', '0:v:0', '-c:v', 'copy', '-an', '-sn', '-dn', '-f', 'null', '-');
    return args;
  }

  /** Runs ffmpeg again at once with what record() says now (clip recording turned off). */
  async reopen(): Promise<void> {
    if (this.closed) return;
    this.clearTimer();
    await this.stopChild();
    if (!this.closed) this.run();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    await this.stopChild();
  }

  private run(): void {
    if (this.closed) return;
    // Asked before the last run's state is cleared: the clip buffer reads its recording's failure.
    const target = this.options.record?.();
    this.runNumber = newMediaLine();
    this.stderr = new StderrTail();
    this.inputCodec = null;
    this.recordFailure = null;
    this.refusal = null;
    this.stalled = null;
    this.copiedUs = -1;
    this.progressTail = '';
    const child = spawnOwned(this.options.ffmpeg ?? findFfmpeg(), this.args(target), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.running = true;
    this.options.follow?.(this.runNumber, this);
    child.on('error', (error) => this.stderr.addLine(error.message, 'error'));
    (child.stdout as Readable).on('data', (chunk: Buffer) => {
      if (this.child === child) this.readProgress(chunk.toString());
    });
    (child.stderr as Readable).on('data', (chunk: Buffer) => {
      for (const line of this.stderr.push(chunk)) this.readLine(line, Boolean(target));
    });
    this.exited = new Promise((resolve) =>
      child.on('close', () => {
        this.stderr.end();
        if (this.child === child) this.onExit();
        resolve();
      }),
    );
  }

  /** Notes each advance of the time copied (out_time_us) as a packet for the stall check. */
  private readProgress(text: string): void {
    const lines = (this.progressTail + text).split('\n');
    this.progressTail = lines.pop() ?? '';
    for (const line of lines) {
      const copied = /^out_time_us=(\d+)/.exec(line);
      if (!copied || Number(copied[1]) <= this.copiedUs) continue;
      this.copiedUs = Number(copied[1]);
      this.stall.frame();
    }
  }

  private readLine(line: string, recording: boolean): void {
    this.refusal ??= sourceRefusal(line);
    if (recording && !this.recordFailure) {
      if (RECORD_OUTPUT_FAILED.test(line.trim())) {
        this.recordFailure = { atStart: true, message: line.trim() };
        // ffmpeg waits for ever then: it is ended, and run again without or with a full probe.
        void this.reopen();
      } else if (RECORD_WRITE_FAILED.test(line))
        this.recordFailure = { atStart: false, message: line.trim() };
    }
    if (this.inputCodec !== null) return;
    const fps = videoStreamFps(line);
    const size = fps === null ? null : videoStreamSize(line);
    if (fps === null || !size) return;
    this.inputCodec = videoStreamFormat(line)?.codec ?? '';
    this.described = { source: size, fps: fps || DEFAULT_FPS };
    this.backoff.reset();
    this.stall.watch();
    this.emit('described', this.described);
  }

  private onExit(): void {
    this.child = null;
    this.running = false;
    this.stall.stop();
    if (this.closed) return;
    this.ends += 1;
    this.endedWith = this.stalled ?? (this.lastError || 'the main stream ended');
    this.emit('ended', this.endedWith);
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.run();
    }, this.backoff.next());
  }

  private async stopChild(): Promise<void> {
    const child = this.child;
    this.child = null;
    this.running = false;
    this.stall.stop();
    if (!child) return this.exited;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(
        () => child.kill('SIGKILL'),
        this.options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS,
      );
      await this.exited;
      clearTimeout(killer);
    }
    await this.exited;
  }

  private clearTimer(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
