import type { Clock, TimerHandle } from '../clock';
import type { FramePool } from './frame-pool';
import type { SourceInfo } from './frame-source';

export interface BlackFrame {
  data: Uint8Array;
  width: number;
  height: number;
  /** performance.now() when the frame was made, on the same line as real frames. */
  receivedAt: number;
  /** Gives the pooled buffer back. */
  release: () => void;
}

/**
 * Stands in for a lost stream: black frames of its last size at its rate, on the clock, so the
 * analysis keeps its rhythm (tracks age, the AI video keeps moving) until real frames come back.
 */
export class BlackFrameFiller {
  private timer: TimerHandle | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly pool: FramePool,
    private readonly emit: (frame: BlackFrame) => void,
  ) {}

  get running(): boolean {
    return this.timer !== null;
  }

  /** Starts filling at the size and rate given; does nothing while already filling. */
  start({ width, height, fps }: Pick<SourceInfo, 'width' | 'height' | 'fps'>): void {
    if (this.timer) return;
    this.timer = this.clock.setInterval(() => {
      // Pooled like real frames: a camera lost for minutes must not churn a fresh 1 MB buffer per
      // frame through the heap (a GC storm that slows every other stream). Blanked each time, since
      // the buffer last held a picture.
      const data = this.pool.take(width * height * 3).fill(0);
      this.emit({ data, width, height, receivedAt: performance.now(), release: this.pool.releaser(data) });
    }, 1000 / fps);
  }

  stop(): void {
    if (this.timer) this.clock.clearInterval(this.timer);
    this.timer = null;
  }
}
