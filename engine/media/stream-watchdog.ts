// Over 400 lines on purpose: the state machine (start, stall, reconnect, close) reads best in one place;
// every part with a job of its own is already out in its own module.
import { EventEmitter } from 'node:events';
import { type Clock, systemClock, type TimerHandle } from '../clock';
import { engineLoopLag, OVERLOAD_HOLD_MS, overloadSeconds } from '../system/loop-lag';
import type { PixelSize } from './analysis-size';
import { BlackFrameFiller } from './black-frame-filler';
import { framePool } from './frame-pool';
import { FrameRateMeter } from './frame-rate-meter';
import {
  DEFAULT_FPS,
  FrameSource,
  type RtspTransport,
  type SourceFrame,
  type SourceInfo,
} from './frame-source';
import { DecodePath } from './hwaccel';
import { RateSwitch } from './rate-switch';
import { RECONNECT_POLICY, ReconnectBackoff } from './reconnect-policy';
import type { SourceUrl } from './source-url';
import { StallDetector } from './stall-detector';
import type {
  FrameSourceFactory,
  SourceMode,
  StreamWatchdogEvents,
  StreamWatchdogOptions,
  WatchdogState,
  WatchedSource,
} from './watchdog-types';

export type * from './watchdog-types';

const CONNECT_TIMEOUT_MS = 15_000;
const PULL_TIMEOUT_MS = 15_000;
/** Pause between tries to open a network source within the pull timeout of start(). */
const START_RETRY_MS = 500;

const defaultFactory: FrameSourceFactory = (source, transport, mode) =>
  new FrameSource(source, { transport, seekS: mode.seekS, hwaccel: mode.hwaccel });

/**
 * Keeps one video source flowing for a task: opens it, notices when it stalls or drops, reopens it
 * with backoff (alternating TCP and UDP for RTSP), and meanwhile has black frames stand in for it.
 * The parts with a job of their own: reconnect-policy.ts (the waits), rate-switch.ts (analysis or
 * full rate), black-frame-filler.ts. Every timer runs on an injected clock.
 */
export class StreamWatchdog extends EventEmitter<StreamWatchdogEvents> {
  private current: WatchdogState = 'idle';
  private readonly connectTimeoutMs: number;
  private readonly clock: Clock;
  private readonly streamClock: Clock;
  private readonly createSource: FrameSourceFactory;
  readonly decoder: DecodePath;
  private readonly backoff: ReconnectBackoff;
  private readonly filler: BlackFrameFiller;
  private readonly rates: RateSwitch<WatchedSource, SourceFrame>;
  private frameSource: WatchedSource | null = null;
  private latestSource: WatchedSource | null = null;
  /** Resolves when the sources being stopped (after a stall, a rate switch) are gone. */
  private sourceStopping: Promise<void> = Promise.resolve();
  private transport: RtspTransport = 'tcp';
  private starting: { resolve: (info: SourceInfo) => void; reject: (error: Error) => void } | null = null;
  private streamInfo: SourceInfo | null = null;
  private readonly stall: StallDetector;
  /** What the running source delivers: from ffmpeg's count of decoded frames once it gives one. */
  private readonly rate = new FrameRateMeter();
  private counted: { by: 'frames' | 'progress'; frames: number } = { by: 'frames', frames: 0 };
  private emitted = 0;
  private restorations = 0;
  private error = '';
  /** The last silence the stall detector put down to the engine's own lateness, and when. */
  private excused = { at: Number.NEGATIVE_INFINITY, reason: '' };
  private connectTimer: TimerHandle | null = null;
  private retryTimer: TimerHandle | null = null;
  private backoffTimer: TimerHandle | null = null;
  private closing: Promise<void> | null = null;
  /** The rate asked for, and the rate of the ffmpeg now running. */
  private wantFullRate = false;
  private activeFullRate = false;
  /** Where the running file source started and when its first frame came: its position now. */
  private playback = { seekS: 0, startedAt: 0 };

  constructor(
    readonly source: SourceUrl,
    options: StreamWatchdogOptions = {},
  ) {
    super();
    this.connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    this.clock = options.clock ?? systemClock;
    this.streamClock = options.streamClock ?? systemClock;
    this.createSource = options.createSource ?? defaultFactory;
    this.decoder = options.decoder ?? new DecodePath({ setting: 'none', hwaccel: 'none', fallback: null });
    this.backoff = new ReconnectBackoff(
      options.reconnectPolicy ?? {
        firstMs: options.backoffFirstMs ?? RECONNECT_POLICY.firstMs,
        maxMs: options.backoffMaxMs ?? RECONNECT_POLICY.maxMs,
      },
    );
    const loopLag = options.loopLag ?? engineLoopLag();
    this.stall = new StallDetector(this.streamClock, {
      minMs: options.stallMinMs,
      frames: options.stallFrames,
      fps: () => this.streamInfo?.fps ?? DEFAULT_FPS,
      onStall: (windowMs) => this.onStall(windowMs),
      stolenMs: () => loopLag.stolenMs(),
      onExcused: (silentMs, lateMs) => {
        const reason = `no frame for ${overloadSeconds(silentMs)} s while the engine's event loop was ${overloadSeconds(lateMs)} s behind`;
        this.excused = { at: this.streamClock.now(), reason };
      },
    });
    this.filler = new BlackFrameFiller(this.streamClock, options.framePool ?? framePool, (frame) =>
      this.emit('frame', {
        ...frame,
        synthetic: true,
        index: this.emitted++,
        source: this.streamInfo?.source ?? frame,
      }),
    );
    this.rates = new RateSwitch(
      {
        clock: this.streamClock,
        timeoutMs: this.connectTimeoutMs,
        timeoutReason: noFrameWithin(this.connectTimeoutMs),
      },
      {
        open: (fullRate, seekS) => this.open({ fullRate, seekS }),
        takeOver: (source, fullRate, seekS, frame) => this.takeOver(source, fullRate, seekS, frame),
        stopAside: (source) => this.stopAside(source),
      },
    );
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
      this.connectTimer = this.streamClock.setTimeout(
        () => this.failStart(this.withDetail(noFrameWithin(timeoutMs))),
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
    this.rates.abandon();
    const source = this.frameSource;
    this.frameSource = null;
    this.closing = Promise.all([this.sourceStopping, source?.stop()]).then(() => undefined);
    return this.closing;
  }

  /**
   * Asks for every frame of the source (true) or the analysis-rate cap (false). A running stream
   * switches make-before-break (rate-switch.ts); resolves once the switch is done or given up
   * (see rateSwitchFailure); info.fps is the rate in effect. A stream that is not running takes the
   * asked rate at its next reconnect.
   */
  setFullRate(on: boolean): Promise<void> {
    this.wantFullRate = on;
    const underWay = this.rates.underWay(on);
    if (underWay) return underWay;
    this.rates.abandon();
    if (this.current !== 'running' || !this.frameSource || this.activeFullRate === on)
      return Promise.resolve();
    return this.rates.begin(on, this.playbackPosition());
  }

  /**
   * The analysis rate changed: a running stream at that rate reopens its source at the new one,
   * make-before-break like a rate switch. One at full rate, or not running, takes it when it next
   * opens an ffmpeg at the analysis rate.
   */
  analysisRateChanged(): Promise<void> {
    if (this.current !== 'running' || !this.frameSource || this.wantFullRate || this.activeFullRate)
      return Promise.resolve();
    return this.rates.begin(false, this.playbackPosition());
  }

  /**
   * Opens the running stream's source again with what its factory makes now (a task's clip
   * recording turned off), make-before-break like a rate switch; one that refuses a second client is
   * stopped and opened again (lost for a moment). A stream that is not running takes it when it next
   * opens an ffmpeg. Joins a reopening under way.
   */
  async reopen(): Promise<void> {
    const source = this.frameSource;
    if (this.current !== 'running' || !source) return;
    const rate = this.activeFullRate;
    await (this.rates.underWay(rate) ?? this.rates.begin(rate, this.playbackPosition()));
    if (this.frameSource !== source || this.current !== 'running' || this.rates.underWay(!rate)) return;
    this.loseStream(`reopened after ${this.rates.failure}`);
    void this.stopSourceThenRetry();
  }

  /** True while the running ffmpeg passes every frame of the source. */
  get fullRate(): boolean {
    return this.activeFullRate;
  }

  /** Why the last rate switch was given up; '' when it worked. */
  get rateSwitchFailure(): string {
    return this.rates.failure;
  }

  get state(): WatchdogState {
    return this.current;
  }

  /** How many times the stream was lost and came back. */
  get reconnects(): number {
    return this.restorations;
  }

  /**
   * Why the stream counts as overloaded rather than lost: a silence of a whole stall window came
   * while the engine itself was late, within the last OVERLOAD_HOLD_MS; null otherwise.
   */
  get overload(): string | null {
    return this.streamClock.now() - this.excused.at <= OVERLOAD_HOLD_MS ? this.excused.reason : null;
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

  /**
   * Frames per second the source delivers over the last few seconds (ffmpeg's count of what it
   * decoded, before the analysis rate drops any); 0 while the stream is lost.
   */
  get fps(): number {
    return this.rate.fps();
  }

  private connect(): void {
    this.setState('connecting');
    try {
      const source = this.open({ fullRate: this.wantFullRate, seekS: 0 });
      this.frameSource = source;
      this.latestSource = source;
      this.activeFullRate = this.wantFullRate;
      this.playback = { seekS: 0, startedAt: 0 };
      source.start();
    } catch (error) {
      // No ffmpeg binary, or spawn refused the arguments: a failed attempt like any other.
      this.frameSource = null;
      this.onAttemptFailed((error as Error).message);
      return;
    }
    if (!this.starting)
      this.connectTimer = this.streamClock.setTimeout(() => {
        this.connectTimer = null;
        this.error = noFrameWithin(this.connectTimeoutMs);
        void this.stopSourceThenRetry();
      }, this.connectTimeoutMs);
  }

  /**
   * Makes an ffmpeg for the stream, its frames and exit routed: to the rate switch whose candidate
   * it is, else to the stream while it is the stream's source. The caller starts it.
   */
  private open(mode: Omit<SourceMode, 'hwaccel'>): WatchedSource {
    const hwaccel = this.decoder.hwaccel;
    const source = this.createSource(this.source, this.transport, { ...mode, hwaccel });
    source.on('frame', (frame) => {
      this.rates.onFrame(source, frame);
      if (source === this.frameSource) this.onRealFrame(source, frame);
      else frame.release();
    });
    source.on('software', (why) => this.decoder.decodesInSoftware(why));
    source.on('progress', ({ frames, at }) => {
      if (source !== this.frameSource || this.current !== 'running') return;
      if (this.counted.by === 'frames') this.restartRate('progress');
      this.rate.add(at, frames);
    });
    source.on('exit', ({ code, stderrTail }) => {
      const reason = source.lastError || `ffmpeg exited with code ${code}`;
      const software = this.decoder.fellBack(stderrTail, source.lastError, hwaccel);
      // Opened again at once: in software, or with what the factory makes after a failed recording.
      const again = software || Boolean(source.recordError);
      if (!this.rates.onExit(source, reason) && source === this.frameSource)
        this.onSourceExit(source, reason, again);
    });
    return source;
  }

  /** A rate switch's candidate is live: it becomes the stream's source and the previous one stops. */
  private takeOver(source: WatchedSource, fullRate: boolean, seekS: number, frame: SourceFrame): void {
    const previous = this.frameSource;
    this.frameSource = source;
    this.latestSource = source;
    this.activeFullRate = fullRate;
    this.playback = { seekS, startedAt: frame.receivedAt };
    this.streamInfo = source.info ?? infoOf(frame);
    this.restartRate('frames');
    if (previous) this.stopAside(previous);
  }

  /**
   * A new ffmpeg counts from 0, and what it delivers is measured afresh (a reconnect's catch-up is
   * not averaged with the old stream): by its frames until it gives its own count.
   */
  private restartRate(by: 'frames' | 'progress'): void {
    this.rate.clear();
    this.counted = { by, frames: 0 };
  }

  /** Stops an ffmpeg that no longer feeds the stream; close() still waits for it. */
  private stopAside(source: WatchedSource): void {
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

  private onRealFrame(source: WatchedSource, frame: SourceFrame): void {
    if (this.current === 'connecting') this.becomeRunning(source, frame);
    if (this.current !== 'running') {
      frame.release();
      return;
    }
    this.stall.frame();
    if (this.counted.by === 'frames') this.rate.add(frame.receivedAt, ++this.counted.frames);
    const { data, width, height, release } = frame;
    const info = this.streamInfo;
    const size = frame.source;
    if (info && (width !== info.width || height !== info.height || !sameSize(size, info.source)))
      this.streamInfo = { ...info, width, height, source: size };
    this.emit('frame', {
      data,
      width,
      height,
      source: size,
      synthetic: false,
      index: this.emitted++,
      receivedAt: frame.receivedAt,
      mediaAt: frame.mediaAt,
      mediaLine: frame.mediaLine,
      release,
    });
  }

  private becomeRunning(source: WatchedSource, frame: SourceFrame): void {
    this.clearTimer('connectTimer');
    this.filler.stop();
    const info = source.info ?? infoOf(frame);
    this.streamInfo = info;
    this.backoff.reset();
    this.restartRate('frames');
    this.playback.startedAt = frame.receivedAt;
    this.setState('running');
    this.stall.watch();
    if (this.starting) {
      this.starting.resolve(info);
      this.starting = null;
    } else {
      this.restorations++;
      this.emit('restored', info);
    }
    // Asked for another rate while this attempt was connecting.
    if (this.wantFullRate !== this.activeFullRate)
      void this.rates.begin(this.wantFullRate, this.playbackPosition());
  }

  /**
   * `again`: it failed for a reason of the engine's own that the next ffmpeg does not have (its
   * hardware decode path, and the stream now decodes in software; its clip recording).
   */
  private onSourceExit(source: WatchedSource, reason: string, again: boolean): void {
    this.frameSource = null;
    if (again && this.current === 'connecting') {
      // Not the source's fault: it is opened again at once.
      this.connect();
      return;
    }
    if (this.starting) {
      // A source ffmpeg refused (too large, not video) would be refused again: no retries.
      if (this.source.kind === 'file' || source.refused) {
        this.failStart(source.refused ?? reason);
        return;
      }
      // A camera still booting or a server not yet listening gets the whole pull timeout, not one
      // try; RTSP servers that refuse TCP interleaving may still serve RTP over UDP.
      this.error = reason;
      this.switchTransport();
      this.retryTimer = this.streamClock.setTimeout(() => {
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
    this.clearTimer('connectTimer');
    this.error = reason;
    this.scheduleReconnect();
  }

  /** Leaving 'running': says so once, and black frames take over. */
  private loseStream(reason: string): void {
    this.stall.stop();
    // The reconnect opens the source at the asked rate anyway.
    this.rates.abandon();
    this.error = reason;
    this.restartRate('frames');
    this.emit('lost', { reason });
    if (this.streamInfo) this.filler.start(this.streamInfo);
  }

  private onStall(windowMs: number): void {
    if (this.current !== 'running') return;
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
    this.switchTransport();
    this.setState('reconnecting');
    this.backoffTimer = this.clock.setTimeout(() => {
      this.backoffTimer = null;
      if (this.current === 'reconnecting') this.connect();
    }, this.backoff.next());
  }

  /** RTSP alternates TCP and UDP from one try to the next. */
  private switchTransport(): void {
    if (this.source.kind === 'rtsp') this.transport = this.transport === 'tcp' ? 'udp' : 'tcp';
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

  private setState(next: WatchdogState): void {
    const previous = this.current;
    if (previous === next || previous === 'closed') return;
    this.current = next;
    this.emit('state', next, previous);
  }

  private clearTimer(name: 'connectTimer' | 'retryTimer'): void {
    const timer = this[name];
    if (timer) this.streamClock.clearTimeout(timer);
    this[name] = null;
  }

  private clearTimers(): void {
    this.clearTimer('connectTimer');
    this.clearTimer('retryTimer');
    this.stall.stop();
    this.filler.stop();
    if (this.backoffTimer) this.clock.clearTimeout(this.backoffTimer);
    this.backoffTimer = null;
  }
}

const sameSize = (a: PixelSize, b: PixelSize) => a.width === b.width && a.height === b.height;
/** What a source that has not described itself yet is taken for, from its first frame. */
const infoOf = (frame: SourceFrame): SourceInfo => ({
  width: frame.width,
  height: frame.height,
  fps: DEFAULT_FPS,
  source: frame.source,
});
const seconds = (ms: number) => Math.round(ms / 100) / 10;
const noFrameWithin = (ms: number) => `no video frame within ${seconds(ms)} s`;
