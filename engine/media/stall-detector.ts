import type { Clock, TimerHandle } from '../clock';

export interface StallOptions {
  /** A stall is no frame for max(minMs, `frames` frame intervals). Defaults 3 s and 10 frames. */
  minMs?: number;
  frames?: number;
  /** The stream's rate now (a rate switch changes it), read at each check. */
  fps: () => number;
  /** Called once per watch, with the silence that made the stall. */
  onStall: (windowMs: number) => void;
}

/** Notices a running stream gone silent: no frame for a whole window of the clock's time. */
export class StallDetector {
  private lastFrameAt = 0;
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
    this.lastFrameAt = this.clock.now();
    this.arm(this.windowMs);
  }

  frame(): void {
    this.lastFrameAt = this.clock.now();
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
      if (silentMs < windowMs) this.arm(windowMs - silentMs);
      else this.options.onStall(windowMs);
    }, ms);
  }
}
