import { describe, expect, it } from 'vitest';
import { matchTones } from '../engine/change/tones';

/** Tone matching of change detection (issue 19): a changed area must not move the mapping elsewhere. */
describe('matchTones', () => {
  // A smooth "sky" gradient, 200 x 100, levels 150..229; the later shot is brighter and gamma-mapped.
  const cols = 200;
  const rows = 100;
  const later = (v: number) => 255 * Math.min(1, (v * 1.1 + 10) / 255) ** 0.8;
  const scene = () => {
    const before = new Float32Array(cols * rows);
    const after = new Float32Array(cols * rows);
    for (let y = 0; y < rows; y++)
      for (let x = 0; x < cols; x++) {
        before[y * cols + x] = 150 + (x * 80) / cols;
        after[y * cols + x] = later(150 + (x * 80) / cols);
      }
    return { before, after };
  };

  it('maps each level to the later shot, and an object over most of some levels does not move them', () => {
    const { before, after } = scene();
    // A dark object over the brightest quarter of the gradient, all its rows.
    for (let y = 0; y < rows; y++) for (let x = 150; x < cols; x++) after[y * cols + x] = 60;
    const valid = new Uint8Array(cols * rows).fill(1);
    matchTones(before, after, valid);
    let worst = 0;
    for (let x = 0; x < 150; x++)
      worst = Math.max(worst, Math.abs((before[x] as number) - later(150 + (x * 80) / cols)));
    expect(worst).toBeLessThan(1.5);
  });
});
