/** How often the loop's lateness is sampled. */
const TICK_MS = 100;
/** Lateness under this is the loop's ordinary jitter (a collection, a busy moment), not starvation. */
const JITTER_MS = 50;
/** The loop running this late means the engine is overloaded (a task's health says so)... */
export const OVERLOAD_LAG_MS = 1_000;
/** ...for this long after it was. */
export const OVERLOAD_HOLD_MS = 10_000;

/**
 * How late the engine's own event loop runs: a timer due every 100 ms notes how much later it came.
 * A starved or blocked engine cannot read the frames its sources deliver (they wait in their pipes),
 * so the stall detector does not count the time the loop was late as a source's silence, and the
 * tasks say they are overloaded instead of lost.
 */
export class LoopLag {
  /** Lateness beyond the jitter, summed since the start. */
  private stolen = 0;
  private lastTick: number;
  private worst = { at: Number.NEGATIVE_INFINITY, ms: 0 };

  constructor(private readonly now: () => number = () => performance.now()) {
    this.lastTick = now();
    // Unref'd: measuring never keeps the process alive.
    setInterval(() => this.tick(), TICK_MS).unref();
  }

  /** Milliseconds the loop has been late since it started, a lateness still going on included. */
  stolenMs(): number {
    return this.stolen + this.lateBy(this.now());
  }

  /** The last lateness of at least OVERLOAD_LAG_MS within OVERLOAD_HOLD_MS; null when there was none. */
  recentLagMs(): number | null {
    const now = this.now();
    const late = this.lateBy(now) + JITTER_MS;
    if (late >= OVERLOAD_LAG_MS) return late;
    return now - this.worst.at <= OVERLOAD_HOLD_MS ? this.worst.ms : null;
  }

  private tick(): void {
    const now = this.now();
    const late = this.lateBy(now);
    this.stolen += late;
    if (late + JITTER_MS >= OVERLOAD_LAG_MS) this.worst = { at: now, ms: late + JITTER_MS };
    this.lastTick = now;
  }

  private lateBy(now: number): number {
    return Math.max(0, now - this.lastTick - TICK_MS - JITTER_MS);
  }
}

/**
 * Seconds as every overload reason gives them: to the tenth, one decimal always ("4.0 s"), as
 * docs/api.md writes them and the console reads them.
 */
export const overloadSeconds = (ms: number) => (Math.round(ms / 100) / 10).toFixed(1);

/** Why the engine counts as overloaded by its own loop ("ran 2.3 s late"); null when it does not. */
export function lagOverload(lag: Pick<LoopLag, 'recentLagMs'>): string | null {
  const ms = lag.recentLagMs();
  return ms === null ? null : `the engine's event loop ran ${overloadSeconds(ms)} s late`;
}

let processLag: LoopLag | null = null;

/** The lateness of this process's event loop, measured from the first call on. */
export function engineLoopLag(): LoopLag {
  processLag ??= new LoopLag();
  return processLag;
}
