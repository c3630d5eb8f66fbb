import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { detectChanges } from '../engine/change/detect';
import { loadOpenCv, type OpenCv } from '../engine/change/opencv';
import { NotRegisteredError } from '../engine/change/register';
import type { Box, Frame } from '../engine/vision/types';
import { type ChangePair, changePairs, fixtureFrame, score } from './helpers/change-pairs';
import { FIXTURES } from './helpers/fixtures';

/**
 * Change detection (issue 19) measured on generated pairs: camera rotation up to 10 degrees, scale
 * +-10 %, shifts, exposure, white balance, gamma and JPEG quality 60-95, with pasted objects.
 */

const SET = { seed: 19, changed: 30, unchanged: 10 };

async function frameOf(bytes: Buffer): Promise<Frame> {
  const { data, info } = await sharp(bytes)
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height };
}

const boxOf = ({ x1, y1, x2, y2 }: Box): Box => ({ x1, y1, x2, y2 });

describe('the generated change benchmark', () => {
  let pairs: ChangePair[];
  let cv: OpenCv;

  beforeAll(async () => {
    [pairs, cv] = await Promise.all([changePairs(SET), loadOpenCv()]);
  });

  it('is the same for a seed, with every truth box inside its image', async () => {
    const again = await changePairs({ ...SET, changed: 2, unchanged: 1 });
    expect(again.map((p) => p.truth)).toEqual(
      pairs
        .slice(0, 2)
        .map((p) => p.truth)
        .concat([[]]),
    );
    expect(Buffer.from(again[0]?.after.data ?? []).equals(Buffer.from(pairs[0]?.after.data ?? []))).toBe(
      true,
    );
    const truths = pairs.flatMap((p) => p.truth.map((box) => ({ box, p })));
    expect(truths.length).toBeGreaterThanOrEqual(50);
    for (const { box, p } of truths) {
      expect(box.x1).toBeGreaterThanOrEqual(0);
      expect(box.y1).toBeGreaterThanOrEqual(0);
      expect(box.x2).toBeLessThanOrEqual(p.after.width);
      expect(box.y2).toBeLessThanOrEqual(p.after.height);
    }
    expect(pairs.filter((p) => p.truth.length === 0)).toHaveLength(SET.unchanged);
  });

  // Before issue 19: precision 0.063, recall 0.58, 179 regions on 10 unchanged pairs; with OpenCV's
  // registration, precision 0.56, recall 0.89, none on unchanged pairs; with tones matched by the
  // monotone curve most pixels support, see below (one pair cannot be registered: 42208).
  it('finds the pasted objects with precision and recall >= 0.95 at IoU >= 0.5, and nothing on unchanged pairs', () => {
    let unregistered = 0;
    const regionsOf = (p: ChangePair) => {
      try {
        return detectChanges(cv, p.before, p.after);
      } catch (error) {
        // The engine answers 42208 for such a pair: it reports no region.
        if (!(error instanceof NotRegisteredError)) throw error;
        unregistered++;
        return [];
      }
    };
    const figures = score(pairs.map((p) => ({ truth: p.truth, regions: regionsOf(p) })));
    console.info('change benchmark:', JSON.stringify({ ...figures, unregistered }));
    expect(unregistered).toBeLessThanOrEqual(1);
    expect(figures.precision).toBeGreaterThanOrEqual(0.95);
    expect(figures.recall).toBeGreaterThanOrEqual(0.95);
    expect(figures.falseOnUnchanged).toBe(0);
    // 40 pairs registered and compared: 45 s on two loaded cores (the 30 s default failed there).
  }, 180_000);

  // Before issue 19 it also reported a 53x32 region of sky at (489, 165), score 0.78.
  it('finds exactly the patch on leuvenB shifted 3 px and brightened, nothing in the flat sky above it', async () => {
    const patch: Box = { x1: 430, y1: 240, x2: 520, y2: 310 };
    const leuven = readFileSync(join(FIXTURES, 'media', 'leuvenB.jpg'));
    const object = await sharp(join(FIXTURES, 'media', 'basketball1.png'))
      .extract({ left: 100, top: 80, width: 90, height: 70 })
      .toColourspace('srgb')
      .png()
      .toBuffer();
    // The camera moved 3 px: after(x, y) shows before(x - 3, y); the uncovered edge repeats the border.
    const extended = await sharp(leuven).extend({ left: 3, extendWith: 'copy' }).png().toBuffer();
    const shifted = await sharp(extended)
      .extract({ left: 0, top: 0, width: 751, height: 563 })
      .png()
      .toBuffer();
    const after = await sharp(shifted)
      .linear(1.2, 15)
      .composite([{ input: object, left: patch.x1, top: patch.y1 }])
      .jpeg({ quality: 90 })
      .toBuffer();
    const regions = detectChanges(cv, await fixtureFrame('leuvenB.jpg'), await frameOf(after));
    // The object alone: its left 13 columns resemble the brick they cover within a pixel's tolerance.
    expect(regions.map(boxOf)).toEqual([{ ...patch, x1: 443 }]);
  });
});
