import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../engine/clock';

describe('ManualClock', () => {
  it('runs due timeouts and intervals in time order, with now() at each one’s time', () => {
    const clock = new ManualClock(0);
    const runs: string[] = [];
    const note = (name: string) => () => runs.push(`${name}@${clock.now()}`);
    const tick = clock.setInterval(note('tick'), 400);
    clock.setTimeout(note('once'), 1_000);
    clock.setTimeout(note('early'), 100);
    clock.advance(1_300);
    expect(runs).toEqual(['early@100', 'tick@400', 'tick@800', 'once@1000', 'tick@1200']);
    expect(clock.now()).toBe(1_300);

    clock.clearInterval(tick);
    clock.advance(5_000);
    expect(runs.length).toBe(5);
    expect(clock.pending).toBe(0);
  });

  it('orders timers due at the same time by when they were armed, re-armed intervals included', () => {
    const clock = new ManualClock(0);
    const runs: string[] = [];
    clock.setInterval(() => runs.push('interval'), 100);
    clock.setTimeout(() => runs.push('timeout'), 200);
    clock.advance(200);
    // The interval's second run was armed at 100, after the timeout (armed at 0).
    expect(runs).toEqual(['interval', 'timeout', 'interval']);
  });

  it('lets an interval clear itself and timers armed on the way run within the same advance', () => {
    const clock = new ManualClock(0);
    const runs: number[] = [];
    let ticks = 0;
    const handle = clock.setInterval(() => {
      runs.push(clock.now());
      if (++ticks === 3) clock.clearInterval(handle);
      clock.setTimeout(() => runs.push(-clock.now()), 50);
    }, 100);
    clock.advance(1_000);
    expect(runs).toEqual([100, -150, 200, -250, 300, -350]);
    expect(clock.pending).toBe(0);
  });

  it('runs a 0 ms interval once per millisecond rather than forever', () => {
    const clock = new ManualClock(0);
    let runs = 0;
    clock.setInterval(() => runs++, 0);
    clock.advance(5);
    expect(runs).toBe(5);
  });
});

describe('systemClock', () => {
  it('runs an interval until it is cleared', async () => {
    let runs = 0;
    const handle = systemClock.setInterval(() => runs++, 5);
    await new Promise((resolve) => setTimeout(resolve, 100));
    systemClock.clearInterval(handle);
    const after = runs;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(after).toBeGreaterThan(0);
    expect(runs).toBe(after);
  });
});
