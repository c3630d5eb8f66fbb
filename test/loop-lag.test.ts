import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LoopLag, lagOverload } from '../engine/system/loop-lag';

/** The engine's measure of its own event loop's lateness, on a time the test moves with the timers. */

let now = 0;
let lag: LoopLag;

/** Moves time on by `ms` with the loop keeping up (its 100 ms timer fires on time). */
function run(ms: number): void {
  for (let left = ms; left > 0; left -= 100) {
    now += 100;
    vi.advanceTimersByTime(100);
  }
}

/** Holds the loop for `ms` from a tick on: time passes and no timer fires... */
function hold(ms: number): void {
  now += ms;
}

/** ...until the loop is free again: the timer due meanwhile fires, late. */
function release(): void {
  vi.advanceTimersByTime(100);
}

beforeEach(() => {
  vi.useFakeTimers();
  now = 0;
  lag = new LoopLag(() => now);
});
afterEach(() => vi.useRealTimers());

describe('LoopLag', () => {
  it('counts none of a loop that keeps up, nor its jitter', () => {
    run(5_000);
    hold(140);
    release();
    run(1_000);
    expect([lag.stolenMs(), lag.recentLagMs(), lagOverload(lag)]).toEqual([0, null, null]);
  });

  it('counts a blocked loop’s time as stolen, the block still going on included', () => {
    run(1_000);
    hold(4_000);
    // Read before the late timer fires, as a stall check due in the block is.
    expect(lag.stolenMs()).toBe(4_000 - 150);
    release();
    run(1_000);
    expect(lag.stolenMs()).toBe(4_000 - 150);
  });

  it('says overloaded for 10 s after the loop ran a second late or more', () => {
    run(1_000);
    hold(2_000);
    release();
    expect(lagOverload(lag)).toBe("the engine's event loop ran 1.9 s late");
    run(9_900);
    expect(lag.recentLagMs()).toBe(1_900);
    run(200);
    expect(lag.recentLagMs()).toBeNull();
    hold(1_000);
    release();
    expect(lag.recentLagMs()).toBeNull();
    hold(1_100);
    release();
    expect(lag.recentLagMs()).toBe(1_000);
  });
});
