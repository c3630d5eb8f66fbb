// The measured rate covers the frames of this last stretch of time.
const WINDOW_MS = 5_000;

/** Frames per second from the arrival times (performance.now()) of the last few seconds. */
export class FrameRateMeter {
  private arrivals: number[] = [];

  add(at: number): void {
    this.arrivals.push(at);
    this.forgetBefore(at - WINDOW_MS);
  }

  clear(): void {
    this.arrivals = [];
  }

  /** 0 with fewer than two frames in the window. */
  fps(now = performance.now()): number {
    this.forgetBefore(now - WINDOW_MS);
    const first = this.arrivals[0];
    const last = this.arrivals.at(-1);
    if (first === undefined || last === undefined || last === first) return 0;
    return ((this.arrivals.length - 1) * 1000) / (last - first);
  }

  private forgetBefore(time: number): void {
    const stale = this.arrivals.findIndex((at) => at >= time);
    this.arrivals.splice(0, stale === -1 ? this.arrivals.length : stale);
  }
}
