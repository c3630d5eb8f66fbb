import type { Clock, TimerHandle } from '../clock';

export interface ThrottleLimits {
  /** Length of a key's window, from its first line. */
  windowMs: number;
  /** Lines of a key written in full per window; the rest are counted. */
  burst: number;
  /** Keys with a window open at once; past it, new keys share one window. */
  maxKeys: number;
}

export const THROTTLE_DEFAULTS: ThrottleLimits = { windowMs: 60_000, burst: 1, maxKeys: 1000 };

/** The key that keys past maxKeys share. */
const OVERFLOW = '\0overflow';

interface Window<T> {
  written: number;
  repeats: number;
  last: T;
  timer: TimerHandle;
}

/**
 * Keeps a repeating kind of line (a failing camera's analysis errors, a flapping stream, a receiver
 * that refuses every callback) from flooding the log: per key, the first `burst` lines of a window
 * are written as they come, the others are counted, and the window's end writes one summary with
 * their count and the last of them. A camera failing every frame costs two lines a minute.
 */
export class LogThrottle<T> {
  private readonly windows = new Map<string, Window<T>>();
  private readonly limits: ThrottleLimits;

  constructor(
    private readonly clock: Clock,
    /** Writes a line: `repeats` is 0 for one written as it came, else the count it sums up. */
    private readonly write: (entry: T, repeats: number, windowMs: number) => void,
    limits: Partial<ThrottleLimits> = {},
  ) {
    this.limits = {
      windowMs: limits.windowMs ?? THROTTLE_DEFAULTS.windowMs,
      burst: limits.burst ?? THROTTLE_DEFAULTS.burst,
      maxKeys: limits.maxKeys ?? THROTTLE_DEFAULTS.maxKeys,
    };
  }

  line(key: string, entry: T): void {
    const shared = this.windows.size < this.limits.maxKeys ? key : OVERFLOW;
    const window = this.windows.get(key) ?? this.windows.get(shared) ?? this.open(shared, entry);
    if (window.written < this.limits.burst) {
      window.written += 1;
      this.write(entry, 0, this.limits.windowMs);
    } else {
      window.repeats += 1;
      window.last = entry;
    }
  }

  /** Ends every window, writing the summaries due (the engine is stopping). */
  close(): void {
    for (const key of [...this.windows.keys()]) this.end(key);
  }

  private open(key: string, entry: T): Window<T> {
    const window: Window<T> = {
      written: 0,
      repeats: 0,
      last: entry,
      timer: this.clock.setTimeout(() => this.end(key), this.limits.windowMs),
    };
    this.windows.set(key, window);
    return window;
  }

  private end(key: string): void {
    const window = this.windows.get(key);
    if (!window) return;
    this.clock.clearTimeout(window.timer);
    this.windows.delete(key);
    if (window.repeats > 0) this.write(window.last, window.repeats, this.limits.windowMs);
  }
}
