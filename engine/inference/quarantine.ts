/** A model held back again and again waits twice as long each time, up to this many periods. */
const MAX_PERIODS = 16;

/**
 * Models held back after they overran an inference host (time, memory or a crash): their frames are
 * refused with the reason until the period ends, so one hostile model cannot keep killing hosts
 * and starving every other task's frames.
 */
export class Quarantine {
  private readonly held = new Map<string, { until: number; reason: string }>();
  /** How often each model was held back. */
  private readonly strikes = new Map<string, number>();

  constructor(
    private readonly periodMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Holds the model back from now on; returns the message its frames fail with. */
  hold(key: string, reason: string): string {
    const strikes = (this.strikes.get(key) ?? 0) + 1;
    this.strikes.set(key, strikes);
    const period = this.periodMs * Math.min(2 ** (strikes - 1), MAX_PERIODS);
    this.held.set(key, { until: this.now() + period, reason });
    return this.message(reason, period);
  }

  /** Why the model's frames are refused now, or null when they are not. */
  refusal(key: string): string | null {
    const entry = this.held.get(key);
    if (!entry) return null;
    const left = entry.until - this.now();
    if (left > 0) return this.message(entry.reason, left);
    this.held.delete(key);
    return null;
  }

  private message(reason: string, leftMs: number): string {
    return `${reason}; its frames are refused for ${Math.ceil(leftMs / 1000)} s`;
  }
}
