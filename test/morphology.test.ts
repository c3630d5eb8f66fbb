import { describe, expect, it } from 'vitest';
import { morph, openClose } from '../engine/inference/morphology';

const COLS = 40;
const ROWS = 24;
const CLOSE_RADIUS = 2;

/** Opening then closing, every pass run: what openClose must give whatever it skips. */
function fourPasses(foreground: Uint8Array): Uint8Array {
  const [spare, mask, scratch] = [0, 1, 2].map(() => new Uint8Array(COLS * ROWS)) as [
    Uint8Array,
    Uint8Array,
    Uint8Array,
  ];
  morph(foreground, spare, scratch, COLS, ROWS, 1, 'erode');
  morph(spare, mask, scratch, COLS, ROWS, 1, 'dilate');
  morph(mask, spare, scratch, COLS, ROWS, CLOSE_RADIUS, 'dilate');
  morph(spare, mask, scratch, COLS, ROWS, CLOSE_RADIUS, 'erode');
  return mask;
}

function openCloseOf(foreground: Uint8Array): Uint8Array {
  // Work buffers left dirty by an earlier frame: the result must not depend on them.
  const [mask, spare, scratch] = [0, 1, 2].map(() => new Uint8Array(COLS * ROWS).fill(1)) as [
    Uint8Array,
    Uint8Array,
    Uint8Array,
  ];
  openClose(foreground, mask, spare, scratch, COLS, ROWS, CLOSE_RADIUS);
  return mask;
}

/** A mask with `share` of its pixels set at random (seeded), plus an optional solid block. */
function maskOf(seed: number, share: number, block?: { x: number; y: number; w: number; h: number }) {
  const mask = new Uint8Array(COLS * ROWS);
  let state = seed;
  for (let i = 0; i < mask.length; i++) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    mask[i] = state / 2 ** 31 < share ? 1 : 0;
  }
  if (block)
    for (let y = block.y; y < block.y + block.h; y++)
      for (let x = block.x; x < block.x + block.w; x++) mask[y * COLS + x] = 1;
  return mask;
}

describe('openClose', () => {
  it.each([
    ['an empty frame', maskOf(1, 0)],
    ['speckle only (the erosion leaves nothing)', maskOf(2, 0.05)],
    ['an object', maskOf(3, 0, { x: 5, y: 4, w: 6, h: 9 })],
    ['an object in speckle', maskOf(4, 0.05, { x: 20, y: 10, w: 5, h: 8 })],
    ['dense noise', maskOf(5, 0.6)],
  ])('gives what the four passes give: %s', (_, foreground) => {
    expect(openCloseOf(foreground)).toEqual(fourPasses(foreground));
  });

  it('keeps an object and drops the speckle around it', () => {
    const mask = openCloseOf(maskOf(6, 0.03, { x: 10, y: 6, w: 6, h: 8 }));
    expect(mask[10 * COLS + 12]).toBe(1);
    expect(mask.reduce((sum, v) => sum + v, 0)).toBeGreaterThanOrEqual(6 * 8);
    expect(mask[20 * COLS + 35]).toBe(0);
  });
});
