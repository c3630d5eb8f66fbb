import { EventEmitter } from 'node:events';
import { type Clock, systemClock, type TimerHandle } from '../clock';
import type { Frame } from '../inference/types';
import { type FramePool, framePool } from './frame-pool';
import {
  DEFAULT_FPS,
  FrameSource,
  type RtspTransport,
  type SourceFrame,
  type SourceInfo,
} from './frame-source';
import type { SourceUrl } from './source-url';

/**
 * idle -> connecting -> running -> stalled -> reconnecting -> connecting -> ...; closed from any state.
 * 'stalled' is the short time a silent ffmpeg is being stopped.
 */
export type WatchdogState = 'idle' | 'connecting' | 'running' | 'stalled' | 'reconnecting' | 'closed';

export interface WatchdogFrame extends Frame {
  /** True for the black frames that stand in for the stream while it is lost. */
  synthetic: boolean;
  /** Frames emitted since start(), real and black. */
  index: number;
  /** performance.now() when the frame was read or made. */
  receivedAt: number;
  /** Gives the pooled buffer back (frame-pool.ts says who calls it). */
  release?: () => void;
}

export interface StreamWatchdogEvents {
  state: [state: WatchdogState, previous: WatchdogState];
  frame: [WatchdogFrame];
  lost: [{ reason: string }];
  restored: [SourceInfo];
}

/** How an ffmpeg for the stream is to read its source. */
export interface SourceMode {
  /** Every frame of the source, not only the analysis rate: while an AI video is encoded (4.10). */
  fullRate: boolean;
  /** Files only: where to start, in seconds, so that a rate switch continues instead of rewinding. */
  seekS: number;
}

export type FrameSourceFactory = (
  source: SourceUrl,
  transport: RtspTransport,
  mode: SourceMode,
) => FrameSource;

export interface StreamWatchdogOptions {
  /** Makes each ffmpeg; the lead passes its ffmpeg path and output rate here. */
  createSource?: FrameSourceFactory;
  /** Runs the reconnect backoff. Default systemClock. */
  clock?: Clock;
  /** A running stream is stalled after no frame for max(stallMinMs, stallFrames intervals). */
  stallMinMs?: number;
  stallFrames?: number;
  /** Reconnect backoff: the first wait, doubled after each failed attempt up to the max. */
  backoffFirstMs?: number;
  backoffMaxMs?: number;
  /** A reconnect attempt that gives no frame within this is abandoned. Default 15 s. */
  connectTimeoutMs?: number;
  /** Where black frames take their buffers. Default: the engine's frame pool. */
  framePool?: FramePool;
}

const DEFAULTS = {
  stallMinMs: 3_000,
  stallFrames: 10,
  backoffFirstMs: 1_000,
  backoffMaxMs: 30_000,
  connectTimeoutMs: 15_000,
};
const PULL_TIMEOUT_MS = 15_000;
/** Pause between tries to open a network source within the pull timeout of start(). */
const START_RETRY_MS = 500;
// The measured rate covers the frames of this last stretch of time.
const FPS_WINDOW_MS = 5_000;

const defaultFactory: FrameSourceFactory = (source, transport, mode) =>
  new FrameSource(source, { transport, seekS: mode.seekS });

/** A second ffmpeg opened for a rate switch; it takes over once its frames come in real time. */
interface RateSwitch {
  source: FrameSource;
  fullRate: boolean;
  seekS: number;
  /** When the candidate's previous frame came; null before its first. */
  lastFrameAt: number | null;
  timer: NodeJS.Timeout;
  done: Promise<void>;
  finish: () => void;
}

/**
 * Keeps one video source flowing for a task: opens it, notices when it stalls or drops, reopens it
 * with backoff (alternating TCP and UDP for RTSP), and meanwhile emits black frames at the stream's
 * rate so the analysis keeps its rhythm. Backoff runs on the injected clock; stall detection and
 * black frames follow real time, like the frames they watch or replace.
 */
export class StreamWatchdog extends EventEmitter<StreamWatchdogEvents> {
  private current: WatchdogState = 'idle';
  private readonly settings: typeof DEFAULTS;
  private readonly clock: Clock;
  private readonly framePool: FramePool;
  private readonly createSource: FrameSourceFactory;
  private frameSource: FrameSource | null = null;
  private latestSource: FrameSource | null = null;
  /** Resolves when the source being stopped after a stall is gone. */
  private sourceStopping: Promise<void> = Promise.resolve();
  private transport: RtspTransport = 'tcp';
  private starting: { resolve: (info: SourceInfo) => void; reject: (error: Error) => void } | null = null;
  private streamInfo: SourceInfo | null = null;
  private lastFrameAt = 0;
  private arrivals: number[] = [];
  private emitted = 0;
  /** Failures since the stream was last running: the loss itself, then each failed attempt. */
  private failures = 0;
  private restorations = 0;
  private error = '';
  private connectTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  private blackTimer: NodeJS.Timeout | null = null;
  private backoffTimer: TimerHandle | null = null;
  private closing: Promise<void> | null = null;
  /** The rate asked for, and the rate of the ffmpeg now running. */
  private wantFullRate = false;
  private activeFullRate = false;
  private rateSwitch: RateSwitch | null = null;
  private rateSwitchError = '';
  /** Where the running file source started and when its first frame came: its position now. */
  private playback = { seekS: 0, startedAt: 0 };

  constructor(
    readonly source: SourceUrl,
    options: StreamWatchdogOptions = {},
  ) {
    super();
    this.settings = {
      stallMinMs: options.stallMinMs ?? DEFAULTS.stallMinMs,
      stallFrames: options.stallFrames ?? DEFAULTS.stallFrames,
      backoffFirstMs: options.backoffFirstMs ?? DEFAULTS.backoffFirstMs,
      backoffMaxMs: options.backoffMaxMs ?? DEFAULTS.backoffMaxMs,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
    };
    this.clock = options.clock ?? systemClock;
    this.framePool = options.framePool ?? framePool;
    this.createSource = options.createSource ?? defaultFactory;
  }

  /**
   * Opens the source. Resolves with its size and rate on the first decoded frame; rejects with
   * ffmpeg's last error when there is none within the timeout or ffmpeg gives up first, and then
   * the watchdog is closed with no ffmpeg left. RTSP tries TCP, then UDP, within the same timeout.
   */
  start(timeoutMs = PULL_TIMEOUT_MS): Promise<SourceInfo> {
    if (this.current !== 'idle') return Promise.reject(new Error(`start() in state ${this.current}`));
    return new Promise((resolve, reject) => {
      this.starting = { resolve, reject };
      this.connectTimer = setTimeout(
        () => this.failStart(this.withDetail(`no video frame within ${seconds(timeoutMs)} s`)),
        timeoutMs,
      );
      this.connect();
    });
  }

  /** Stops everything; resolves once ffmpeg is gone. Safe to call from any state, more than once. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.setState('closed');
    this.clearTimers();
    this.starting?.reject(new Error('closed before the first frame'));
    this.starting = null;
    this.abandonRateSwitch();
    const source = this.frameSource;
    this.frameSource = null;
    this.closing = Promise.all([this.sourceStopping, source?.stop()]).then(() => undefined);
    return this.closing;
  }

  /**
   * Asks for every frame of the source (true) or the analysis-rate cap (false). A running stream
   * switches make-before-break: a second ffmpeg opens the source and takes over once its frames come
   * in real time, and only then is the first one stopped, so the stream is never lost on the way.
   * Resolves once the switch is done or given up (a source that refuses a second client keeps its
   * rate; see rateSwitchFailure); info.fps is the rate in effect. A stream that is not running takes
   * the asked rate at its next reconnect.
   */
  setFullRate(on: boolean): Promise<void> {
    this.wantFullRate = on;
    const pending = this.rateSwitch;
    if (pending && pending.fullRate === on) return pending.done;
    this.abandonRateSwitch();
    if (this.current !== 'running' || !this.frameSource || this.activeFullRate === on)
      return Promise.resolve();
    return this.startRateSwitch(on);
  }

  /** True while the running ffmpeg passes every frame of the source. */
  get fullRate(): boolean {
    return this.activeFullRate;
  }

  /** Why the last rate switch was given up; '' when it worked. */
  get rateSwitchFailure(): string {
    return this.rateSwitchError;
  }

  get state(): WatchdogState {
    return this.current;
  }

  /** How many times the stream was lost and came back. */
  get reconnects(): number {
    return this.restorations;
  }

  /** Why the stream was last lost or an attempt failed; '' until then. */
  get lastError(): string {
    return this.error;
  }

  /** The latest ffmpeg's last ~4 KB of stderr. */
  get stderrTail(): string {
    return this.latestSource?.stderrTail ?? '';
  }

  /** Size of the last real frame and the stream's rate; null before the first frame. */
  get info(): SourceInfo | null {
    return this.streamInfo;
  }

  /** Real frames per second over the last few seconds; 0 while the stream is lost. */
  get fps(): number {
    this.forgetArrivalsBefore(performance.now() - FPS_WINDOW_MS);
    const first = this.arrivals[0];
    const last = this.arrivals.at(-1);
    if (first === undefined || last === undefined || last === first) return 0;
    return ((this.arrivals.length - 1) * 1000) / (last - first);
  }

  private connect(): void {
    this.setState('connecting');
    let source: FrameSource;
    try {
      source = this.createSource(this.source, this.transport, { fullRate: this.wantFullRate, seekS: 0 });
      this.frameSource = source;
      this.latestSource = source;
      this.activeFullRate = this.wantFullRate;
      this.playback = { seekS: 0, startedAt: 0 };
      this.attach(source);
      source.start();
    } catch (error) {
      // No ffmpeg binary, or spawn refused the arguments: a failed attempt like any other.
      this.frameSource = null;
      this.onAttemptFailed((error as Error).message);
      return;
    }
    if (!this.starting)
      this.connectTimer = setTimeout(() => {
        this.connectTimer = null;
        this.error = `no video frame within ${seconds(this.settings.connectTimeoutMs)} s`;
        void this.stopSourceThenRetry();
      }, this.settings.connectTimeoutMs);
  }

  /** Routes a source's frames and exit: to the rate switch it is the candidate of, else to the stream. */
  private attach(source: FrameSource): void {
    source.on('frame', (frame) => {
      const pending = this.rateSwitch;
      if (pending?.source === source && this.caughtUp(pending, frame))
        this.completeRateSwitch(pending, frame);
      if (source === this.frameSource) this.onRealFrame(source, frame);
      else frame.release();
    });
    source.on('exit', ({ code }) => {
      const pending = this.rateSwitch;
      if (pending?.source === source)
        this.failRateSwitch(pending, source.lastError || `ffmpeg exited with code ${code}`);
      else if (source === this.frameSource) this.onSourceExit(source, code);
    });
  }

  private startRateSwitch(on: boolean): Promise<void> {
    const seekS = this.playbackPosition();
    let source: FrameSource;
    try {
      source = this.createSource(this.source, this.transport, { fullRate: on, seekS });
    } catch (error) {
      this.rateSwitchError = (error as Error).message;
      return Promise.resolve();
    }
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const pending: RateSwitch = {
      source,
      fullRate: on,
      seekS,
      lastFrameAt: null,
      done,
      finish,
      timer: setTimeout(
        () =>
          this.failRateSwitch(pending, `no video frame within ${seconds(this.settings.connectTimeoutMs)} s`),
        this.settings.connectTimeoutMs,
      ),
    };
    this.rateSwitch = pending;
    this.attach(source);
    source.start();
    return done;
  }

  /**
   * Whether the candidate runs in real time yet. A network source first delivers what it buffered
   * while probing, seconds old and in a burst: taking over then would show the past. Frames that
   * come at least half a frame interval apart are live.
   */
  private caughtUp(pending: RateSwitch, frame: SourceFrame): boolean {
    const previous = pending.lastFrameAt;
    pending.lastFrameAt = frame.receivedAt;
    const interval = 1000 / (pending.source.info?.fps ?? DEFAULT_FPS);
    return previous !== null && frame.receivedAt - previous >= interval / 2;
  }

  /** The candidate is live: it becomes the stream's source and the previous ffmpeg is stopped. */
  private completeRateSwitch(pending: RateSwitch, frame: SourceFrame): void {
    clearTimeout(pending.timer);
    this.rateSwitch = null;
    this.rateSwitchError = '';
    const previous = this.frameSource;
    this.frameSource = pending.source;
    this.latestSource = pending.source;
    this.activeFullRate = pending.fullRate;
    this.playback = { seekS: pending.seekS, startedAt: frame.receivedAt };
    this.streamInfo = pending.source.info ?? { width: frame.width, height: frame.height, fps: DEFAULT_FPS };
    this.arrivals = [];
    this.stopAside(previous);
    pending.finish();
  }

  private failRateSwitch(pending: RateSwitch, reason: string): void {
    if (this.rateSwitch !== pending) return;
    this.rateSwitchError = reason;
    this.abandonRateSwitch();
  }

  private abandonRateSwitch(): void {
    const pending = this.rateSwitch;
    if (!pending) return;
    this.rateSwitch = null;
    clearTimeout(pending.timer);
    this.stopAside(pending.source);
    pending.finish();
  }

  /** Stops an ffmpeg that no longer feeds the stream; close() still waits for it. */
  private stopAside(source: FrameSource | null): void {
    if (!source) return;
    const stopping = this.sourceStopping;
    this.sourceStopping = Promise.all([stopping, source.stop()]).then(() => undefined);
  }

  /** Seconds into a file source now (it plays at its own rate and loops); 0 for live sources. */
  private playbackPosition(): number {
    const duration = this.frameSource?.durationS;
    if (this.source.kind !== 'file' || !duration || !this.playback.startedAt) return 0;
    const played = this.playback.seekS + (performance.now() - this.playback.startedAt) / 1000;
    return played % duration;
  }

  private onRealFrame(source: FrameSource, frame: SourceFrame): void {
    if (this.current === 'connecting') this.becomeRunning(source, frame);
    if (this.current !== 'running') {
      frame.release();
      return;
    }
    this.lastFrameAt = frame.receivedAt;
    this.arrivals.push(frame.receivedAt);
    this.forgetArrivalsBefore(frame.receivedAt - FPS_WINDOW_MS);
    const { data, width, height, release } = frame;
    if (this.streamInfo && (width !== this.streamInfo.width || height !== this.streamInfo.height))
      this.streamInfo = { ...this.streamInfo, width, height };
    this.emit('frame', {
      data,
      width,
      height,
      synthetic: false,
      index: this.emitted++,
      receivedAt: frame.receivedAt,
      release,
    });
  }

  private becomeRunning(source: FrameSource, frame: SourceFrame): void {
    this.clearConnectTimer();
    this.stopBlackFrames();
    const info = source.info ?? { width: frame.width, height: frame.height, fps: DEFAULT_FPS };
    this.streamInfo = info;
    this.failures = 0;
    this.lastFrameAt = frame.receivedAt;
    this.playback.startedAt = frame.receivedAt;
    this.setState('running');
    this.armStallTimer(this.stallWindowMs());
    if (this.starting) {
      this.starting.resolve(info);
      this.starting = null;
    } else {
      this.restorations++;
      this.emit('restored', info);
    }
    // Asked for another rate while this attempt was connecting.
    if (this.wantFullRate !== this.activeFullRate) void this.startRateSwitch(this.wantFullRate);
  }

  private onSourceExit(source: FrameSource, code: number | null): void {
    this.frameSource = null;
    const reason = source.lastError || `ffmpeg exited with code ${code}`;
    if (this.starting) {
      // A source ffmpeg refused (too large, not video) would be refused again: no retries.
      if (this.source.kind === 'file' || source.refused) {
        this.failStart(source.refused ?? reason);
        return;
      }
      // A camera still booting or a server not yet listening gets the whole pull timeout, not one
      // try; RTSP servers that refuse TCP interleaving may still serve RTP over UDP.
      this.error = reason;
      if (this.source.kind === 'rtsp') this.transport = this.transport === 'tcp' ? 'udp' : 'tcp';
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        if (this.starting) this.connect();
      }, START_RETRY_MS);
    } else if (this.current === 'running') {
      this.loseStream(reason);
      this.scheduleReconnect();
    } else if (this.current === 'connecting') {
      this.onAttemptFailed(reason);
    }
  }

  private onAttemptFailed(reason: string): void {
    if (this.starting) {
      this.failStart(reason);
      return;
    }
    this.clearConnectTimer();
    this.error = reason;
    this.scheduleReconnect();
  }

  /** Leaving 'running': says so once, and black frames take over. */
  private loseStream(reason: string): void {
    this.clearStallTimer();
    // The reconnect opens the source at the asked rate anyway.
    this.abandonRateSwitch();
    this.error = reason;
    this.arrivals = [];
    this.emit('lost', { reason });
    this.startBlackFrames();
  }

  private checkStall(): void {
    this.stallTimer = null;
    if (this.current !== 'running') return;
    const windowMs = this.stallWindowMs();
    const silentMs = performance.now() - this.lastFrameAt;
    if (silentMs < windowMs) {
      this.armStallTimer(windowMs - silentMs);
      return;
    }
    this.loseStream(`no frame for ${seconds(windowMs)} s`);
    void this.stopSourceThenRetry();
  }

  /** 'stalled': ffmpeg is alive but silent, so it is stopped before the next attempt. */
  private async stopSourceThenRetry(): Promise<void> {
    this.setState('stalled');
    const source = this.frameSource;
    this.frameSource = null;
    this.sourceStopping = source?.stop() ?? Promise.resolve();
    await this.sourceStopping;
    if (this.current === 'stalled') this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    this.failures++;
    if (this.source.kind === 'rtsp') this.transport = this.transport === 'tcp' ? 'udp' : 'tcp';
    const { backoffFirstMs, backoffMaxMs } = this.settings;
    const delay = Math.min(backoffFirstMs * 2 ** (this.failures - 1), backoffMaxMs);
    this.setState('reconnecting');
    this.backoffTimer = this.clock.setTimeout(() => {
      this.backoffTimer = null;
      if (this.current === 'reconnecting') this.connect();
    }, delay);
  }

  /** Rejects start() with the error (a SourceTooLargeError keeps its type for the caller). */
  private failStart(reason: string | Error): void {
    const starting = this.starting;
    this.starting = null;
    void this.close().then(() => starting?.reject(typeof reason === 'string' ? new Error(reason) : reason));
  }

  /** The running attempt's error, else the one before it (the retry may not have said anything yet). */
  private withDetail(message: string): string {
    const detail = this.latestSource?.lastError || this.error;
    return detail ? `${message}: ${detail}` : message;
  }

  private stallWindowMs(): number {
    const fps = this.streamInfo?.fps ?? DEFAULT_FPS;
    return Math.max(this.settings.stallMinMs, (this.settings.stallFrames * 1000) / fps);
  }

  private startBlackFrames(): void {
    const info = this.streamInfo;
    if (!info || this.blackTimer) return;
    this.blackTimer = setInterval(() => {
      const { width, height } = info;
      // Pooled like real frames: a camera lost for minutes must not churn a fresh 1 MB buffer per
      // frame through the heap (a GC storm that slows every other stream). Blanked each time, since
      // the buffer last held a picture.
      const data = this.framePool.take(width * height * 3).fill(0);
      this.emit('frame', {
        data,
        width,
        height,
        synthetic: true,
        index: this.emitted++,
        receivedAt: performance.now(),
        release: this.framePool.releaser(data),
      });
    }, 1000 / info.fps);
  }

  private armStallTimer(ms: number): void {
    this.stallTimer = setTimeout(() => this.checkStall(), ms);
  }

  private forgetArrivalsBefore(time: number): void {
    const stale = this.arrivals.findIndex((at) => at >= time);
    this.arrivals.splice(0, stale === -1 ? this.arrivals.length : stale);
  }

  private setState(next: WatchdogState): void {
    const previous = this.current;
    if (previous === next || previous === 'closed') return;
    this.current = next;
    this.emit('state', next, previous);
  }

  private stopBlackFrames(): void {
    if (this.blackTimer) clearInterval(this.blackTimer);
    this.blackTimer = null;
  }

  private clearConnectTimer(): void {
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.connectTimer = null;
  }

  private clearStallTimer(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
  }

  private clearTimers(): void {
    this.clearConnectTimer();
    this.clearStallTimer();
    this.stopBlackFrames();
    if (this.backoffTimer) this.clock.clearTimeout(this.backoffTimer);
    this.backoffTimer = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;
