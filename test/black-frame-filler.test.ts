import { describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock';
import { type BlackFrame, BlackFrameFiller } from '../engine/media/black-frame-filler';
import { FramePool } from '../engine/media/frame-pool';

function filler() {
  const clock = new ManualClock(0);
  const frames: (BlackFrame & { at: number })[] = [];
  const fill = new BlackFrameFiller(clock, new FramePool(1024 * 1024), (frame) =>
    frames.push({ ...frame, at: clock.now() }),
  );
  return { clock, frames, fill };
}

describe('BlackFrameFiller', () => {
  it('emits black frames of the stream’s size at its rate, on the clock', () => {
    const { clock, frames, fill } = filler();
    fill.start({ width: 4, height: 2, fps: 5 });
    clock.advance(999);
    expect(frames.map((frame) => frame.at)).toEqual([200, 400, 600, 800]);
    clock.advance(1);
    expect(frames.map(({ width, height, at }) => ({ width, height, at })).at(-1)).toEqual({
      width: 4,
      height: 2,
      at: 1_000,
    });
    expect(frames.every((frame) => frame.data.length === 4 * 2 * 3 && frame.data.every((v) => v === 0))).toBe(
      true,
    );
  });

  it('reuses a given-back buffer, blanked again after a consumer painted on it', () => {
    const { clock, frames, fill } = filler();
    fill.start({ width: 4, height: 2, fps: 10 });
    clock.advance(100);
    const first = frames[0] as BlackFrame;
    first.data.fill(255);
    first.release();
    clock.advance(100);
    const second = frames[1] as BlackFrame;
    expect(second.data.buffer).toBe(first.data.buffer);
    expect([...second.data]).toEqual(new Array(24).fill(0));
  });

  it('starts once however often asked, and stops leaving no timer', () => {
    const { clock, frames, fill } = filler();
    fill.start({ width: 4, height: 2, fps: 10 });
    fill.start({ width: 8, height: 8, fps: 50 });
    clock.advance(1_000);
    expect([frames.length, fill.running, frames.every((frame) => frame.width === 4)]).toEqual([
      10,
      true,
      true,
    ]);
    fill.stop();
    clock.advance(1_000);
    expect([frames.length, fill.running, clock.pending]).toEqual([10, false, 0]);
  });
});
