import { describe, expect, it } from 'vitest';
import { FrameRateMeter } from '../engine/media/frame-rate-meter';

/** The meter behind health.stream.fps, on counts taken at times the test gives. */

/** Counts of a 10 fps source every 0.5 s from `from` to `to` ms, the first `total`; returns the last. */
function feed(meter: FrameRateMeter, from: number, to: number, total = 0): number {
  let frames = total;
  for (let at = from; at <= to; at += 500) {
    meter.add(at, frames);
    frames += 5;
  }
  return frames - 5;
}

describe('FrameRateMeter', () => {
  it('says nothing during a stream’s first 2 s and until its counts span a second', () => {
    const meter = new FrameRateMeter();
    feed(meter, 0, 2_500);
    expect(meter.fps(2_500)).toBe(0);
    feed(meter, 3_000, 3_000, 30);
    expect(meter.fps(3_000)).toBe(10);
  });

  it('leaves a catch-up at the start out: 50 frames at once, then 10 a second', () => {
    const meter = new FrameRateMeter();
    meter.add(0, 1);
    meter.add(300, 51);
    feed(meter, 800, 12_000, 56);
    expect(meter.fps(12_000)).toBe(10);
  });

  it('spreads a burst over the time it stands for: counts held back 6 s come at once', () => {
    const meter = new FrameRateMeter();
    const total = feed(meter, 0, 10_000);
    // The engine read nothing for 6 s, longer than the window; then those 6 s of counts came together.
    for (let i = 1; i <= 12; i++) meter.add(16_000 + i, total + 5 * i);
    expect(meter.fps(16_012)).toBeCloseTo(10, 0);
  });

  it('reads 0 once no count came for the window, and measures afresh after clear()', () => {
    const meter = new FrameRateMeter();
    feed(meter, 0, 10_000);
    expect(meter.fps(10_000)).toBe(10);
    expect(meter.fps(15_001)).toBe(0);
    meter.clear();
    meter.add(20_000, 0);
    meter.add(23_000, 600);
    expect(meter.fps(23_000)).toBe(0);
  });
});
