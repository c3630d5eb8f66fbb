/**
 * Keeps an encoder fed at a constant frame rate from frames that come with jitter, in bursts, or
 * not at all for a while: the encoder stamps frames by their count, so the count must follow the
 * wall clock or the video would drift from real time. For each frame it says how many copies to
 * write (0 when a burst runs ahead of the clock, more than 1 to fill a gap), and on a timer how many
 * repeats of the last frame a silent source owes.
 */
export class FramePacer {
  private startAt: number | null = null;
  private written = 0;

  constructor(
    readonly fps: number,
    /** How many frames the count may run ahead of or behind the clock before the pacer acts. */
    private readonly slackFrames = 2,
  ) {}

  /** Copies of a frame that arrives at `at` (ms, performance.now()) to write. */
  onFrame(at: number): number {
    if (this.startAt === null) this.startAt = at;
    const due = this.due(at);
    if (this.written >= due + this.slackFrames) return 0;
    return this.advance(at, Math.max(1, due - this.written));
  }

  /** Repeats of the last frame to write at `at` because no frame came. */
  onTick(at: number): number {
    if (this.startAt === null) return 0;
    const owed = this.due(at) - this.slackFrames - this.written;
    return owed > 0 ? this.advance(at, owed) : 0;
  }

  /** Frames written so far. */
  get count(): number {
    return this.written;
  }

  /** Frames the clock says should have been written by `at`, the first one at the start. */
  private due(at: number): number {
    return Math.floor(((at - (this.startAt ?? at)) * this.fps) / 1000 + 1e-9) + 1;
  }

  private advance(at: number, copies: number): number {
    // More than a second owed means the process itself stalled: the video resumes from now rather
    // than bursting a second of repeats into the encoder.
    if (copies > Math.max(1, Math.round(this.fps))) {
      this.startAt = at - (this.written * 1000) / this.fps;
      this.written += 1;
      return 1;
    }
    this.written += copies;
    return copies;
  }
}
