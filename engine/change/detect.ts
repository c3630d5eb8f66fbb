import { type Blob, blobsOf, type WorkGrid } from '../inference/blobs';
import { openClose } from '../inference/morphology';
import type { Frame } from '../vision/types';
import type { OpenCv } from './opencv';
import { type Homography, register } from './register';
import { matchTones } from './tones';
import { toWorking, type WorkingImage, workGrid } from './working';

// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

export interface ChangeOptions {
  /** Both images are area-averaged by a whole factor to a grid at least this wide. */
  workWidth: number;
  /** A pixel changed when its colour departs by more than this many levels (0..255)... */
  minDifference: number;
  /** ...and by more than this many times the median difference of the pair (its noise). */
  noiseFactor: number;
  /** Regions under this share of the image area are dropped. */
  minAreaFraction: number;
  /** Radius in working pixels of the closing that joins the fragments of one region. */
  closeRadius: number;
}

export const CHANGE_DEFAULTS: Readonly<ChangeOptions> = {
  workWidth: 400,
  minDifference: 24,
  noiseFactor: 5,
  minAreaFraction: 0.0005,
  closeRadius: 2,
};

/** A changed region of the current image: box and area in its pixels, score 0..1, class 0. */
export type ChangedRegion = Blob;

/**
 * A frame on the grid detectChanges compares it on: all of it that a later comparison needs, a few MB
 * however large the frame (what an image or diff task keeps of its previous image).
 */
export function changeImage(frame: Frame, options: Partial<ChangeOptions> = {}): WorkingImage {
  const { workWidth } = { ...CHANGE_DEFAULTS, ...options };
  return toWorking(frame, workGrid(frame.width, frame.height, workWidth));
}

/**
 * The regions where `current` differs from `reference`, in pixels of `current`. The reference is
 * registered onto the current image first (engine/change/register.ts: camera rotation, zoom, shift;
 * images of different sizes), its tones are mapped onto the current image's per channel (exposure,
 * white balance, gamma: any global monotone change), and a pixel counts as changed only if it lies
 * outside the reference's range around its place (what sub-pixel registration and resampling leave
 * at edges). The mask is opened and closed, and each connected region becomes one changed region.
 * Either image may come as its changeImage. Throws NotRegisteredError for two images that do not
 * show enough of one scene.
 */
export function detectChanges(
  cv: OpenCv,
  reference: Frame | WorkingImage,
  current: Frame | WorkingImage,
  options: Partial<ChangeOptions> = {},
): ChangedRegion[] {
  const o = { ...CHANGE_DEFAULTS, ...options };
  const grid = workGrid(current.width, current.height, o.workWidth);
  const { cols, rows } = grid;
  const n = cols * rows;
  const now = onGrid(current, grid);
  const before = onGrid(reference, workGrid(reference.width, reference.height, o.workWidth));
  const { homography } = register(cv, before, now);
  const { warped, valid } = warp(cv, before, grid, homography);
  for (let plane = 0; plane < 3; plane++) {
    matchTones(
      warped.subarray(plane * n, (plane + 1) * n),
      now.rgb.subarray(plane * n, (plane + 1) * n),
      valid,
    );
  }
  const difference = tolerantDifference(now.rgb, warped, valid, cols, rows);
  const threshold = Math.max(o.minDifference, o.noiseFactor * medianOf(difference, valid));

  const foreground = new Uint8Array(n);
  const ratio = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const d = difference[i] as number;
    if (d > threshold) {
      foreground[i] = 1;
      ratio[i] = d / threshold;
    }
  }
  return regionsOf(foreground, ratio, grid, o);
}

/**
 * The changed pixels of a grid as regions: the mask opened and closed, each connected region of at
 * least minAreaFraction of the grid one region, regions inside another's box merged into it. Each
 * scores `score` of the mean `strength` over its changed pixels (> 0 there).
 */
export function regionsOf(
  foreground: Uint8Array,
  strength: Float32Array,
  grid: WorkGrid,
  options: Pick<ChangeOptions, 'minAreaFraction' | 'closeRadius'>,
  score?: (meanStrength: number) => number,
): ChangedRegion[] {
  const { cols, rows } = grid;
  const n = cols * rows;
  const mask = new Uint8Array(n);
  openClose(foreground, mask, new Uint8Array(n), new Uint8Array(n), cols, rows, options.closeRadius);
  return withoutNested(
    blobsOf(mask, strength, grid, options.minAreaFraction * n, new Uint8Array(n), new Int32Array(n), score),
  );
}

/**
 * A region whose box lies inside another region's box is a part of that object that the closing did
 * not join (an object with a stretch that resembles what it covers): its area goes to the outer one.
 */
function withoutNested(regions: ChangedRegion[]): ChangedRegion[] {
  const inside = (a: ChangedRegion, b: ChangedRegion) =>
    a !== b && a.x1 >= b.x1 && a.y1 >= b.y1 && a.x2 <= b.x2 && a.y2 <= b.y2;
  const kept = regions.filter((r) => !regions.some((outer) => inside(r, outer)));
  return kept.map((outer) => ({
    ...outer,
    area: regions.reduce((sum, r) => (inside(r, outer) ? sum + r.area : sum), outer.area),
  }));
}

/** The image on the grid: a frame is area-averaged onto it; a working image must already be on it. */
function onGrid(image: Frame | WorkingImage, grid: WorkGrid): WorkingImage {
  if (!('rgb' in image)) return toWorking(image, grid);
  if (image.cols !== grid.cols || image.rows !== grid.rows)
    throw new RangeError(
      `a working image of ${image.cols}x${image.rows}, not the ${grid.cols}x${grid.rows} grid`,
    );
  return image;
}

/**
 * The reference's planes resampled (bilinear) onto the current grid through the homography: the
 * reference as the current camera sees it. `valid` marks pixels whose whole sample lies inside the
 * reference.
 */
function warp(cv: OpenCv, reference: WorkingImage, grid: WorkGrid, homography: Homography) {
  const { cols, rows } = grid;
  const n = cols * rows;
  const warped = new Float32Array(3 * n);
  const valid = new Uint8Array(n);
  const size = new cv.Size(cols, rows);
  const flags = cv.INTER_LINEAR + cv.WARP_INVERSE_MAP;
  const zero = new cv.Scalar(0, 0, 0, 0);
  const h = cv.matFromArray(3, 3, cv.CV_64FC1, homography);
  const target = new cv.Mat();
  const planeSize = reference.cols * reference.rows;
  try {
    for (let plane = 0; plane < 3; plane++) {
      const source = cv.matFromArray(
        reference.rows,
        reference.cols,
        cv.CV_32FC1,
        reference.rgb.subarray(plane * planeSize, (plane + 1) * planeSize),
      );
      cv.warpPerspective(source, target, h, size, flags, cv.BORDER_CONSTANT, zero);
      source.delete();
      warped.set(target.data32F, plane * n);
    }
    // A sample that reaches past the reference's border blends in the border value: not valid.
    const ones = new cv.Mat(reference.rows, reference.cols, cv.CV_8UC1);
    ones.data.fill(255);
    cv.warpPerspective(ones, target, h, size, flags, cv.BORDER_CONSTANT, zero);
    ones.delete();
    const covered = target.data;
    for (let i = 0; i < n; i++) valid[i] = covered[i] === 255 ? 1 : 0;
  } finally {
    h.delete();
    target.delete();
  }
  return { warped, valid };
}

/**
 * Per pixel and channel: how far the current value lies outside the range of the warped reference
 * over the valid pixels of its 3 x 3 neighbourhood; the largest over the channels. Edges that
 * registration left a fraction of a pixel apart fall inside that range; a real change does not.
 * 0 where the pixel itself is not valid.
 */
function tolerantDifference(
  current: Float32Array,
  warped: Float32Array,
  valid: Uint8Array,
  cols: number,
  rows: number,
): Float32Array {
  const n = cols * rows;
  const out = new Float32Array(n);
  const low = new Float32Array(n);
  const high = new Float32Array(n);
  const scratchLow = new Float32Array(n);
  const scratchHigh = new Float32Array(n);
  for (let plane = 0; plane < 3; plane++) {
    const base = plane * n;
    neighbourRange(warped, base, valid, cols, rows, low, high, scratchLow, scratchHigh);
    for (let i = 0; i < n; i++) {
      if (valid[i] === 0) continue;
      const value = current[base + i] as number;
      const below = (low[i] as number) - value;
      const above = value - (high[i] as number);
      const d = Math.max(below, above);
      if (d > (out[i] as number)) out[i] = d;
    }
  }
  return out;
}

/** Min and max over the valid pixels of each 3 x 3 neighbourhood of one plane: a row pass, then a column pass. */
function neighbourRange(
  planes: Float32Array,
  base: number,
  valid: Uint8Array,
  cols: number,
  rows: number,
  low: Float32Array,
  high: Float32Array,
  rowLow: Float32Array,
  rowHigh: Float32Array,
): void {
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < cols; x++) {
      let lo = 1e9;
      let hi = -1e9;
      for (let k = x > 0 ? x - 1 : 0, end = x < cols - 1 ? x + 1 : x; k <= end; k++) {
        const j = y * cols + k;
        if (valid[j] === 0) continue;
        const v = planes[base + j] as number;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      rowLow[y * cols + x] = lo;
      rowHigh[y * cols + x] = hi;
    }
  }
  for (let y = 0; y < rows; y++) {
    const from = y > 0 ? y - 1 : 0;
    const to = y < rows - 1 ? y + 1 : y;
    for (let x = 0; x < cols; x++) {
      let lo = 1e9;
      let hi = -1e9;
      for (let k = from; k <= to; k++) {
        const j = k * cols + x;
        if ((rowLow[j] as number) < lo) lo = rowLow[j] as number;
        if ((rowHigh[j] as number) > hi) hi = rowHigh[j] as number;
      }
      low[y * cols + x] = lo;
      high[y * cols + x] = hi;
    }
  }
}

/** Median of the values at valid pixels, to the nearest level. */
function medianOf(values: Float32Array, valid: Uint8Array): number {
  const histogram = new Uint32Array(257);
  let count = 0;
  for (let i = 0; i < values.length; i++) {
    if (valid[i] === 0) continue;
    const bin = Math.min(256, Math.round(values[i] as number));
    histogram[bin] = (histogram[bin] as number) + 1;
    count++;
  }
  let seen = 0;
  for (let v = 0; v < histogram.length; v++) {
    seen += histogram[v] as number;
    if (seen * 2 >= count) return v;
  }
  return 0;
}
