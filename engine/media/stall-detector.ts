import type { Clock, TimerHandle } from '../clock';

export interface StallOptions {
  /** A stall is no frame for max(minMs, `frames` frame intervals). Defaults 3 s and 10 frames. */
  minMs?: number;
  frames?: number;
  /** The stream's rate now (a rate switch changes it), read at each check. */
  fps: () => number;
  /** Called once per watch, with the silence that made the stall. */
  onStall: (windowMs: number) => void;
  /**
   * Milliseconds the engine's event loop has been late so far (loop-lag.ts): time in which it could
   * not have read a frame the source sent. Unset: never late.
   */
  stolenMs?: () => number;
  /** A silence of a whole window was mostly the engine's own lateness, so no stall: how long each. */
  onExcused?: (silentMs: number, lateMs: number) => void;
}

/**
 * Notices a running stream gone silent: no frame for a whole window of the clock's time in which the
 * engine was there to read one. The time its event loop was late does not count: a starved or
 * blocked engine leaves the frames waiting in their pipe, and reopening the source would only add
 * the work of a new ffmpeg. A lost source is one that sends nothing while the engine is responsive.
 */
export class StallDetector {
  private lastFrameAt = 0;
  /** The engine's lateness so far when the last frame came. */
  private lateAtFrame = 0;
  private timer: TimerHandle | null = null;
  private readonly minMs: number;
  private readonly frames: number;

  constructor(
    private readonly clock: Clock,
    private readonly options: StallOptions,
  ) {
    this.minMs = options.minMs ?? 3_000;
    this.frames = options.frames ?? 10;
  }

  /** The silence that makes a stall at the stream's rate now. */
  get windowMs(): number {
    return Math.max(this.minMs, (this.frames * 1000) / this.options.fps());
  }

  /** Starts watching, as if a frame came now. */
  watch(): void {
    this.stop();
    this.frame();
    this.arm(this.windowMs);
  }

  frame(): void {
    this.lastFrameAt = this.clock.now();
    this.lateAtFrame = this.lateMs();
  }

  stop(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  // One timer per window rather than one per frame: it re-arms for what is left of the window.
  private arm(ms: number): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      const windowMs = this.windowMs;
      const silentMs = this.clock.now() - this.lastFrameAt;
      const lateMs = Math.min(silentMs, this.lateMs() - this.lateAtFrame);
      const heardMs = silentMs - lateMs;
      if (heardMs >= windowMs) {
        this.options.onStall(windowMs);
        return;
      }
      if (silentMs >= windowMs) this.options.onExcused?.(silentMs, lateMs);
      // A frame waiting in the pipe is read once this callback returns.
      this.arm(windowMs - heardMs);
    }, ms);
  }

  private lateMs(): number {
    return this.options.stolenMs?.() ?? 0;
  }
}
