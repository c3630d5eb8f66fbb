/**
 * Time as the engine sees it. Every timer of the task lifecycle (part 3 / 8 of the contract) goes
 * through a Clock so tests can move time forward in milliseconds instead of waiting minutes.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

// Node's timers overflow past 2^31-1 ms (~24.8 days); longer waits (license expiry) re-arm in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = (() => {
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
  return {
    now: () => Date.now(),
    setTimeout(fn, ms) {
      const id = nextId++;
      arm(id, fn, Date.now() + ms);
      return { id };
    },
    clearTimeout(handle) {
      const timer = timers.get(handle.id);
      if (timer) clearTimeout(timer);
      timers.delete(handle.id);
    },
  };
})();

/** A clock that only moves when told to; due timers run in time order during advance(). */
export class ManualClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { at: this.current + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle.id);
  }

  advance(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      let dueId = -1;
      let dueAt = Number.POSITIVE_INFINITY;
      for (const [id, timer] of this.timers) {
        if (timer.at <= end && (timer.at < dueAt || (timer.at === dueAt && id < dueId))) {
          dueId = id;
          dueAt = timer.at;
        }
      }
      const due = this.timers.get(dueId);
      if (!due) break;
      this.timers.delete(dueId);
      this.current = Math.max(this.current, dueAt);
      due.fn();
    }
    this.current = end;
  }
}
