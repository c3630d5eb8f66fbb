import { EventEmitter } from 'node:events';
import type { SubStreamHealth } from '../contract/health';
import type { PixelSize } from './analysis-size';
import type { SourceInfo } from './frame-source';
import type { MainRecorder } from './main-recorder';
import { ReconnectBackoff, type ReconnectPolicy } from './reconnect-policy';
import { ofAnalysisUrl } from './source-refusal';
import type { StreamWatchdog } from './stream-watchdog';
import type { AnalysisStream, StreamWatchdogEvents, WatchdogFrame, WatchdogState } from './watchdog-types';

/** A sub-stream whose aspect differs from the main stream's by more than this is said in health. */
export const ASPECT_MISMATCH = 0.02;
const DEFAULT_START_TIMEOUT_MS = 15_000;

export interface DualStreamParts {
  /** The sub-stream (analysis_url), decoded for analysis. */
  sub: StreamWatchdog;
  /** The main stream (video_url), copied for clips, never decoded: it tells the main stream's size. */
  recorder: MainRecorder;
  /** A decoding watchdog of the main stream: while the sub-stream is lost, and while an AI video is watched. */
  openMain(): StreamWatchdog;
  /** Waits between tries to open the main stream for decoding while the sub-stream is lost. */
  reconnectPolicy(): ReconnectPolicy;
}

/**
 * A video task that names a sub-stream (issue 36): analysis decodes the sub-stream, and every frame
 * leaves here stamped with the MAIN stream's size as its `source`, so that source-space.ts (the one
 * mapping) puts boxes, and with them polygons, rules and events, in the main stream's pixels, per
 * axis. The main stream is read by a copy-only ffmpeg for clips (main-recorder.ts) and decoded only
 * while the sub-stream is lost (the fallback: the task does not count as lost while the main stream
 * is up) or while someone watches the AI video (which then shows the main stream, analysed as it
 * plays). The task's stream is lost only when neither gives frames.
 */
export class DualStream extends EventEmitter<StreamWatchdogEvents> implements AnalysisStream {
  private readonly sub: StreamWatchdog;
  private readonly recorder: MainRecorder;
  /** The decoding main stream; null while the sub-stream serves. */
  private main: StreamWatchdog | null = null;
  private mainStarting: Promise<void> | null = null;
  private mainRetry: NodeJS.Timeout | null = null;
  private readonly mainBackoff: ReconnectBackoff;
  private wantFullRate = false;
  /** Whether 'lost' was said last (no stream gives frames), so that 'restored' follows once. */
  private lostSaid = false;
  private closed = false;

  constructor(private readonly parts: DualStreamParts) {
    super();
    this.sub = parts.sub;
    this.recorder = parts.recorder;
    this.mainBackoff = new ReconnectBackoff(parts.reconnectPolicy);
  }

  /**
   * Opens both streams: resolves once the sub-stream gave a frame and the main stream described its
   * size; rejects (the sub-stream's errors marked as analysis_url's) leaving nothing running.
   */
  async start(timeoutMs = DEFAULT_START_TIMEOUT_MS): Promise<SourceInfo> {
    this.sub.on('frame', (frame) => this.onSubFrame(frame));
    try {
      await Promise.all([
        this.recorder.start(timeoutMs),
        this.sub.start(timeoutMs).catch((error: unknown) => {
          throw ofAnalysisUrl(error);
        }),
      ]);
    } catch (error) {
      await this.close();
      throw error;
    }
    this.sub.on('lost', ({ reason }) => this.onSubLost(reason));
    this.sub.on('restored', () => this.onSubRestored());
    return this.info as SourceInfo;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.mainRetry) clearTimeout(this.mainRetry);
    await Promise.all([this.sub.close(), this.recorder.close(), this.closeMain()]);
  }

  /** Every frame of the main stream while an AI video is watched (it shows the main stream), else the sub-stream's. */
  async setFullRate(on: boolean): Promise<void> {
    this.wantFullRate = on;
    if (on) {
      await this.openMain();
      await this.main?.setFullRate(true);
    } else if (this.sub.state === 'running') await this.closeMain();
    else await this.main?.setFullRate(false);
  }

  analysisRateChanged(): Promise<void> {
    return Promise.all([this.sub.analysisRateChanged(), this.main?.analysisRateChanged()]).then(
      () => undefined,
    );
  }

  /** Clip recording turned off (clip-buffers.ts): the main stream's copy runs again without it. */
  reopen(): Promise<void> {
    return this.recorder.reopen();
  }

  /** The main stream's size: every coordinate of the task is in its pixels. */
  private get mainSize(): PixelSize | null {
    return this.recorder.info?.source ?? this.main?.info?.source ?? null;
  }

  /** Whether analysis reads the main stream now. */
  private get onMain(): boolean {
    return this.main?.state === 'running';
  }

  private get active(): StreamWatchdog {
    return this.onMain && this.main ? this.main : this.sub;
  }

  get info(): SourceInfo | null {
    const info = this.active.info;
    const source = this.mainSize;
    return info && source ? { ...info, source } : info;
  }

  get state(): WatchdogState {
    return this.onMain ? 'running' : this.sub.state;
  }

  get fps(): number {
    return this.active.fps;
  }

  get reconnects(): number {
    return this.sub.reconnects + (this.main?.reconnects ?? 0);
  }

  get lastError(): string {
    return this.active.lastError;
  }

  get fullRate(): boolean {
    return this.onMain && Boolean(this.main?.fullRate);
  }

  get rateSwitchFailure(): string {
    return this.active.rateSwitchFailure;
  }

  get decoder(): StreamWatchdog['decoder'] {
    return this.active.decoder;
  }

  get overload(): string | null {
    return this.sub.overload ?? this.main?.overload ?? null;
  }

  /** The sub-stream as health shows it (capacity-api.md). */
  subStreamHealth(): SubStreamHealth {
    const size = this.sub.info?.source ?? null;
    const main = this.mainSize;
    const running = this.sub.state === 'running';
    return {
      state: running ? 'running' : 'lost',
      width: size?.width ?? null,
      height: size?.height ?? null,
      fps: running ? this.sub.fps : null,
      aspect_mismatch: Boolean(size && main && aspectsDiffer(size, main)),
      analysing: this.onMain ? 'main_stream' : 'sub_stream',
      last_error: this.sub.lastError || null,
      main: {
        state: this.recorder.flowing ? 'running' : 'lost',
        drops: this.recorder.drops.count,
        last_error: this.recorder.drops.lastError,
      },
    };
  }

  private onSubFrame(frame: WatchdogFrame): void {
    const source = this.mainSize;
    if (this.onMain || !source) {
      frame.release?.();
      return;
    }
    this.emit('frame', { ...frame, source });
  }

  private onMainFrame(frame: WatchdogFrame): void {
    if (!this.onMain) {
      frame.release?.();
      return;
    }
    this.emit('frame', frame);
  }

  private onSubLost(reason: string): void {
    if (!this.onMain) void this.openMain(reason);
  }

  private onSubRestored(): void {
    if (!this.wantFullRate) void this.closeMain();
    this.sayRestored();
  }

  /** Opens the decoding main stream (joins an opening under way); says 'lost' when it cannot open. */
  private openMain(subReason?: string): Promise<void> {
    if (this.main || this.closed) return this.mainStarting ?? Promise.resolve();
    const main = this.parts.openMain();
    this.main = main;
    if (this.wantFullRate) void main.setFullRate(true);
    main.on('frame', (frame) => this.onMainFrame(frame));
    this.mainStarting = main
      .start()
      .then(() => {
        if (this.main !== main) return;
        this.mainBackoff.reset();
        main.on('lost', ({ reason }) => {
          if (this.sub.state !== 'running') this.sayLost(reason);
        });
        main.on('restored', () => this.sayRestored());
        this.sayRestored();
      })
      .catch((error: Error) => {
        if (this.main !== main) return;
        this.main = null;
        if (this.sub.state === 'running' || this.closed) return;
        this.sayLost(subReason ?? error.message);
        // Tried again while the sub-stream stays lost; its return closes nothing then.
        this.mainRetry = setTimeout(() => {
          this.mainRetry = null;
          if (this.sub.state !== 'running') void this.openMain(subReason);
        }, this.mainBackoff.next());
      })
      .finally(() => {
        if (this.main === main || this.main === null) this.mainStarting = null;
      });
    return this.mainStarting;
  }

  private async closeMain(): Promise<void> {
    const main = this.main;
    this.main = null;
    this.mainStarting = null;
    await main?.close();
  }

  private sayLost(reason: string): void {
    if (this.lostSaid) return;
    this.lostSaid = true;
    this.emit('lost', { reason });
  }

  private sayRestored(): void {
    if (!this.lostSaid) return;
    this.lostSaid = false;
    const info = this.info;
    if (info) this.emit('restored', info);
  }
}

const aspectsDiffer = (a: PixelSize, b: PixelSize) =>
  Math.abs(a.width / a.height / (b.width / b.height) - 1) > ASPECT_MISMATCH;
