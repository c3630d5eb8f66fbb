// The measured rate covers the frames of at least this last stretch of time...
const WINDOW_MS = 5_000;
// ...and nothing is said over less than this: a count that came in one burst (frames the engine
// read at once after it was busy) would read as hundreds a second.
const MIN_SPAN_MS = 1_000;
// The counts of a stream's first seconds are left out: ffmpeg decodes what it buffered while it
// probed a network source (5 s of an RTMP camera) as fast as it can, a catch-up, not the source's rate.
const WARMUP_MS = 2_000;

interface Sample {
  /** performance.now() when the count was taken. */
  at: number;
  /** Frames so far. */
  total: number;
}

/**
 * Frames per second from running totals of frames taken at times (performance.now()): ffmpeg's own
 * count of what it decoded, or the frames the engine read. The rate is the frames between the newest
 * total and one taken at least a window before it (or the oldest), so a burst is spread over the
 * time it stands for.
 */
export class FrameRateMeter {
  private samples: Sample[] = [];
  private startedAt: number | null = null;

  add(at: number, total: number): void {
    this.startedAt ??= at;
    if (at - this.startedAt < WARMUP_MS) return;
    this.samples.push({ at, total });
    // The newest sample at least a window old stays as where the window starts.
    const start = this.samples.findLastIndex((sample) => sample.at <= at - WINDOW_MS);
    if (start > 0) this.samples.splice(0, start);
  }

  /** The count starts again (a new ffmpeg): measured afresh after its warm-up. */
  clear(): void {
    this.samples = [];
    this.startedAt = null;
  }

  /** 0 until the counts span a second after the warm-up, and once none came for a window (a silent source). */
  fps(now = performance.now()): number {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || now - last.at > WINDOW_MS) return 0;
    const span = last.at - first.at;
    return span < MIN_SPAN_MS ? 0 : ((last.total - first.total) * 1000) / span;
  }
}
