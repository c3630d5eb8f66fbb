/**
 * The time a video task's rules measure by (dwell, loitering, speed, left and removed objects).
 *
 * Within one ffmpeg's output the media clock is the truth: a source that delivers in bursts, late or
 * faster than real time still measures true durations. That clock breaks wherever the frames stop
 * coming from one ffmpeg: a reconnect or a rate switch starts another ffmpeg on a clock of its own,
 * black frames stand in on real time while the stream is lost, and a camera's own timestamps may step
 * back, jump or wrap. Across such a break only the engine's monotonic time is trusted. The wall clock
 * is never read after the first frame, so an NTP or operator step of the machine's time cannot move
 * it either. What comes out never goes back: every duration a rule reports is >= 0.
 */

/** What the rule clock reads of a frame (WatchdogFrame's fields). */
export interface TimedFrame {
  /** performance.now() when the frame left ffmpeg (or was made, for a black frame). */
  receivedAt: number;
  /** Real frames: the frame's place on its ffmpeg's media clock, on performance.now()'s scale. */
  mediaAt?: number;
  /** Which ffmpeg's media clock mediaAt is on; another number is another clock. */
  mediaLine?: number;
}

/**
 * How much further the media clock may move in one step than real time did. Bursts are real (an RTMP
 * server sends its cached GOP at connect; analysis drops frames while it is busy; test files play
 * faster than real time), so a step may run ahead by this much; a larger one is a jump of the
 * source's timestamps, and real time stands in for it.
 */
export const MAX_MEDIA_LEAD_MS = 10_000;

export class RuleClock {
  private last: (TimedFrame & { at: number }) | null = null;
  /**
   * Steps of one media clock that real time stood in for: the source's timestamps stepped back,
   * jumped or wrapped. Counted so the operator hears of them (task health, GET /api/system); a new
   * ffmpeg's clock (a reconnect, a rate switch) is no break of the source's.
   */
  breaks = 0;

  /** @param origin ms since the epoch for the first frame (its wall time); only differences matter to rules. */
  constructor(private readonly origin: () => number) {}

  /** The frame's time on the rule clock, ms; frames are passed in their order. */
  at(frame: TimedFrame): number {
    const at = this.last ? this.last.at + this.step(this.last, frame) : this.origin();
    this.last = { at, receivedAt: frame.receivedAt, mediaAt: frame.mediaAt, mediaLine: frame.mediaLine };
    return at;
  }

  /** The media clock's step where it holds from the previous frame to this one, else real time's. */
  private step(last: TimedFrame, frame: TimedFrame): number {
    const real = Math.max(0, frame.receivedAt - last.receivedAt);
    if (frame.mediaAt === undefined || last.mediaAt === undefined || frame.mediaLine !== last.mediaLine)
      return real;
    const media = frame.mediaAt - last.mediaAt;
    if (media >= 0 && media <= real + MAX_MEDIA_LEAD_MS) return media;
    this.breaks++;
    return real;
  }
}
