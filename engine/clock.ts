/**
 * Time as the engine sees it. Every timer of the task lifecycle (part 3 / 8 of the contract) goes
 * through a Clock so tests can move time forward in milliseconds instead of waiting minutes.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** Runs fn every ms (at least 1) until cleared. */
  setInterval(fn: () => void, ms: number): TimerHandle;
  clearInterval(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

// Node's timers overflow past 2^31-1 ms (~24.8 days); longer waits (license expiry) re-arm in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = (() => {
  // Node's clearTimeout clears intervals too: one table serves both kinds.
  const timers = new Map<number, NodeJS.Timeout>();
  let nextId = 1;
  const arm = (id: number, fn: () => void, at: number) => {
    const timer = setTimeout(
      () => {
        if (Date.now() < at) return arm(id, fn, at);
        timers.delete(id);
        fn();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now())),
    );
    timer.unref();
    timers.set(id, timer);
  };
  const clear = (handle: TimerHandle) => {
    const timer = timers.get(handle.id);
    if (timer) clearTimeout(timer);
    timers.delete(handle.id);
  };
  return {
    now: () => Date.now(),
    setTimeout(fn, ms) {
      const id = nextId++;
      arm(id, fn, Date.now() + ms);
      return { id };
    },
    clearTimeout: clear,
    setInterval(fn, ms) {
      const id = nextId++;
      const timer = setInterval(fn, Math.min(MAX_TIMER_MS, Math.max(1, ms)));
      timer.unref();
      timers.set(id, timer);
      return { id };
    },
    clearInterval: clear,
  };
})();

interface ManualTimer {
  at: number;
  /** Arming order: among timers due at the same time, the one armed first runs first. */
  seq: number;
  fn: () => void;
  /** Intervals only: re-armed this far after each run. */
  every?: number;
}

/**
 * A clock that only moves when told to. advance() runs every timer that falls due on the way, in
 * time order, with now() at the timer's time; an interval runs once per period it spans.
 */
export class ManualClock implements Clock {
  private current: number;
  private nextId = 1;
  private nextSeq = 1;
  private readonly timers = new Map<number, ManualTimer>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { at: this.current + Math.max(0, ms), seq: this.nextSeq++, fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle.id);
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    const every = Math.max(1, ms);
    this.timers.set(id, { at: this.current + every, seq: this.nextSeq++, fn, every });
    return { id };
  }

  clearInterval(handle: TimerHandle): void {
    this.timers.delete(handle.id);
  }

  /** How many timers and intervals are armed: a test can see that a part left none behind. */
  get pending(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      let dueId = -1;
      let due: ManualTimer | undefined;
      for (const [id, timer] of this.timers) {
        if (timer.at > end) continue;
        if (!due || timer.at < due.at || (timer.at === due.at && timer.seq < due.seq)) {
          dueId = id;
          due = timer;
        }
      }
      if (!due) break;
      this.current = Math.max(this.current, due.at);
      // An interval keeps its handle: re-armed before it runs, so that fn may clear it.
      if (due.every) this.timers.set(dueId, { ...due, at: due.at + due.every, seq: this.nextSeq++ });
      else this.timers.delete(dueId);
      due.fn();
    }
    this.current = end;
  }
}
