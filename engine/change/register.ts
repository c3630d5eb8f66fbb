import type { Mat, OpenCv } from './opencv';

// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/** A luma image on a working grid, 0..255 floats. */
export interface GrayGrid {
  gray: Float32Array;
  cols: number;
  rows: number;
}

/** 3 x 3, row-major: maps a point of the current grid to the reference grid. */
export type Homography = [number, number, number, number, number, number, number, number, number];

export interface Registration {
  homography: Homography;
  /**
   * "features": matched features, a RANSAC model refined by ECC. "still": the grids laid over each
   * other (stretched where their sizes differ) and refined by ECC, for scenes with too few features
   * to match: a camera that did not move, or flat scenes where there is nothing to register on.
   */
  method: 'features' | 'still';
  /** ECC's correlation of the registered images, -1..1 (1 for a flat pair that ECC cannot use). */
  correlation: number;
  /** Share of the current grid that the reference covers once registered, 0..1. */
  overlap: number;
}

/** Two images that do not show enough of one scene to be compared. */
export class NotRegisteredError extends Error {
  override readonly name = 'NotRegisteredError';
}

export interface RegisterOptions {
  /** Registered images correlate at least this much (ECC's coefficient over the overlap)... */
  minCorrelation: number;
  /** ...and overlap by at least this share of the current image. */
  minOverlap: number;
}

export const REGISTER_DEFAULTS: Readonly<RegisterOptions> = { minCorrelation: 0.5, minOverlap: 0.5 };

/** ORB keypoints per image: matching is quadratic in them, and 1000 register a 400-pixel grid well. */
const FEATURES = 1000;
/** Lowe's ratio: a match counts when clearly better than the second best. */
const RATIO = 0.85;
/** A model from fewer agreeing matches than this is not tried. */
const MIN_INLIERS = 8;
/** RANSAC reprojection tolerance, in the pixels features are matched on. */
const RANSAC_PIXELS = 3;
/** Features are matched on grids halved when both stay at least this wide... */
const FEATURE_MIN_COLS = 200;
/** ...and a model found there is kept with at least this many agreeing matches. */
const HALVED_MIN_INLIERS = 40;
/** A homography is preferred to an affine map only when it explains this many more matches. */
const HOMOGRAPHY_GAIN = 1.1;
/** ECC may move a corner of the current grid this share of its width from where it started; further, it ran off. */
const ECC_MAX_MOVE = 0.03;
/** Pixels whose normalised residual exceeds this many times the median are left out of the final ECC. */
const OUTLIER_FACTOR = 4;
/** ...and exceeds this many standard deviations of the image (a residual of JPEG noise is far below). */
const OUTLIER_FLOOR = 0.3;
/** The residual is averaged over this window first. */
const OUTLIER_WINDOW = 7;

/**
 * Registers the reference onto the current image. ORB features (binary, rotation invariant,
 * comparing intensity orders so exposure changes do not matter) on histogram-equalised luma,
 * ratio-tested matches, RANSAC affine and homography models (the homography where it explains
 * clearly more matches: a tilting camera). Each candidate, and the still camera, is refined by ECC
 * on a coarse grid and the best correlated wins; ECC then refines it on the full grid with what
 * changed (large residuals) masked out, so a pasted object does not pull it.
 */
export function register(
  cv: OpenCv,
  reference: GrayGrid,
  current: GrayGrid,
  options: Partial<RegisterOptions> = {},
): Registration {
  const o = { ...REGISTER_DEFAULTS, ...options };
  const trash: Array<{ delete(): void }> = [];
  const keep = <T extends { delete(): void }>(value: T): T => {
    trash.push(value);
    return value;
  };
  try {
    const matched = featureModel(cv, reference, current, keep);
    const method: Registration['method'] = matched ? 'features' : 'still';
    const start = matched ?? stretch(reference, current);
    const refMat = keep(shrink(cv, reference, 1));
    const curMat = keep(shrink(cv, current, 1));
    const refined = ecc(cv, refMat, curMat, start, keep(agreeing(cv, refMat, curMat, start)), keep);
    // ECC that ran off (a scene with little texture) leaves the start as it was.
    const homography = refined && near(refined.homography, start, current) ? refined.homography : start;
    const { correlation, flat } = correlationOf(cv, refMat, curMat, homography);
    // On a flat image there is nothing to register on, and nothing for a camera move to disturb.
    if (flat) return { homography, method, correlation, overlap: overlapOf(homography, reference, current) };
    if (correlation < o.minCorrelation) {
      throw new NotRegisteredError(
        `image_a and image_b cannot be registered (correlation ${correlation.toFixed(2)} once aligned, at least ${o.minCorrelation} is needed): they do not show enough of one scene`,
      );
    }
    const registered = { homography, method, correlation };
    const overlap = overlapOf(registered.homography, reference, current);
    if (overlap < o.minOverlap) {
      throw new NotRegisteredError(
        `image_a covers ${Math.round(overlap * 100)}% of image_b once registered; at least ${Math.round(o.minOverlap * 100)}% is needed to compare them`,
      );
    }
    return { ...registered, overlap };
  } finally {
    for (const value of trash) value.delete();
  }
}

/** Whether two homographies place every corner of the current grid within ECC_MAX_MOVE of each other. */
function near(a: Homography, b: Homography, current: GrayGrid): boolean {
  const limit = ECC_MAX_MOVE * current.cols;
  for (const [x, y] of [
    [0, 0],
    [current.cols, 0],
    [0, current.rows],
    [current.cols, current.rows],
  ] as const) {
    const [ax, ay] = apply(a, x, y);
    const [bx, by] = apply(b, x, y);
    if (!(Math.hypot(ax - bx, ay - by) <= limit)) return false;
  }
  return true;
}

type Keep = <T extends { delete(): void }>(value: T) => T;

/**
 * The RANSAC model of the ratio-tested ORB matches, or null with too few agreeing matches. Features
 * are matched on the grids halved first when both are wide enough (a quarter of the pixels, half the
 * features: matching is quadratic in them), on the full grids when that finds no model (a small
 * overlap); ECC refines the model on the full grid after.
 */
function featureModel(cv: OpenCv, reference: GrayGrid, current: GrayGrid, keep: Keep): Homography | null {
  const halved = Math.min(reference.cols, current.cols) >= 2 * FEATURE_MIN_COLS;
  return (
    (halved && featureModelAt(cv, reference, current, 2, keep)) ||
    featureModelAt(cv, reference, current, 1, keep)
  );
}

function featureModelAt(
  cv: OpenCv,
  reference: GrayGrid,
  current: GrayGrid,
  level: number,
  keep: Keep,
): Homography | null {
  const halved = (grid: GrayGrid): GrayGrid => {
    if (level === 1) return grid;
    const small = keep(shrink(cv, grid, level));
    return { gray: small.data32F, cols: small.cols, rows: small.rows };
  };
  const orb = keep(new cv.ORB(FEATURES / level));
  const none = keep(new cv.Mat());
  const refPoints = keep(new cv.KeyPointVector());
  const curPoints = keep(new cv.KeyPointVector());
  const refDescriptors = keep(new cv.Mat());
  const curDescriptors = keep(new cv.Mat());
  orb.detectAndCompute(keep(toMat8(cv, halved(reference))), none, refPoints, refDescriptors);
  orb.detectAndCompute(keep(toMat8(cv, halved(current))), none, curPoints, curDescriptors);
  if (refPoints.size() < 2 || curPoints.size() < 2) return null;

  const pairs = keep(new cv.DMatchVectorVector());
  keep(new cv.BFMatcher(cv.NORM_HAMMING, false)).knnMatch(curDescriptors, refDescriptors, pairs, 2);
  const from: number[] = [];
  const to: number[] = [];
  for (let i = 0; i < pairs.size(); i++) {
    // Each get() of the vector of vectors hands back a copy that must be deleted.
    const candidates = pairs.get(i);
    const [best, second] = candidates.size() < 2 ? [] : [candidates.get(0), candidates.get(1)];
    candidates.delete();
    if (!best || !second || best.distance >= RATIO * second.distance) continue;
    const a = curPoints.get(best.queryIdx).pt;
    const b = refPoints.get(best.trainIdx).pt;
    from.push(a.x, a.y);
    to.push(b.x, b.y);
  }
  const count = from.length / 2;
  if (count < MIN_INLIERS) return null;
  const source = keep(cv.matFromArray(count, 1, cv.CV_32FC2, from));
  const target = keep(cv.matFromArray(count, 1, cv.CV_32FC2, to));
  const affineMask = keep(new cv.Mat());
  const affine = keep(
    cv.estimateAffine2D(source, target, affineMask, cv.RANSAC, RANSAC_PIXELS, 2000, 0.995, 10),
  );
  const homographyMask = keep(new cv.Mat());
  const homography = keep(cv.findHomography(source, target, cv.RANSAC, RANSAC_PIXELS, homographyMask));
  const affineInliers = affine.empty() ? 0 : ones(affineMask);
  const homographyInliers = homography.empty() ? 0 : ones(homographyMask);
  // On the halved grids a model must be well supported; a weak one is sought again on the full grids.
  if (Math.max(affineInliers, homographyInliers) < (level === 1 ? MIN_INLIERS : HALVED_MIN_INLIERS))
    return null;
  // An affine map (6 parameters) is the steadier fit; 8 parameters fit noise in few matches.
  const model =
    homographyInliers > HOMOGRAPHY_GAIN * affineInliers
      ? (Array.from(homography.data64F) as Homography)
      : ([...Array.from(affine.data64F), 0, 0, 1] as Homography);
  return rescale(model, level, level);
}

const ones = (mask: Mat) => mask.data.reduce((sum, v) => sum + (v ? 1 : 0), 0);

/**
 * ECC (Evangelidis & Psarakis) from a start: it uses every pixel, so it lands on a fraction of a
 * pixel, and its correlation ignores gain and offset between the shots. `mask` (reference grid)
 * leaves pixels out. Null where it does not converge (a flat scene, a start too far off).
 */
function ecc(
  cv: OpenCv,
  reference: Mat,
  current: Mat,
  start: Homography,
  mask: Mat | null,
  keep: Keep,
): { homography: Homography; correlation: number } | null {
  const warp = keep(cv.matFromArray(3, 3, cv.CV_32FC1, start));
  try {
    const correlation = cv.findTransformECC(
      current,
      reference,
      warp,
      cv.MOTION_HOMOGRAPHY,
      new cv.TermCriteria(cv.TermCriteria_COUNT + cv.TermCriteria_EPS, 20, 1e-4),
      mask ?? keep(new cv.Mat()),
      5,
    );
    return { homography: Array.from(warp.data32F) as Homography, correlation };
  } catch {
    return null;
  }
}

/** Luma spread (standard deviation, levels) under which an image is flat: nothing to register on. */
const FLAT_SPREAD = 2;

/** Zero-mean normalised correlation of the registered images over their overlap. */
function correlationOf(
  cv: OpenCv,
  reference: Mat,
  current: Mat,
  homography: Homography,
): { correlation: number; flat: boolean } {
  const onReference = onReferenceGrid(cv, reference, current, homography);
  const a = reference.data32F;
  const b = onReference.data32F;
  const inside = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) inside[i] = (b[i] as number) >= 0 ? 1 : 0;
  const [meanA, spreadA] = moments(a, inside);
  const [meanB, spreadB] = moments(b, inside);
  let sum = 0;
  let count = 0;
  for (let i = 0; i < a.length; i++) {
    if (!inside[i]) continue;
    sum += ((a[i] as number) - meanA) * ((b[i] as number) - meanB);
    count++;
  }
  onReference.delete();
  const flat = spreadA < FLAT_SPREAD || spreadB < FLAT_SPREAD;
  return { correlation: flat || count === 0 ? (flat ? 1 : 0) : sum / count / (spreadA * spreadB), flat };
}

/** The current image resampled onto the reference grid through the homography; -1 outside it. */
function onReferenceGrid(cv: OpenCv, reference: Mat, current: Mat, homography: Homography): Mat {
  const onReference = new cv.Mat();
  const h = cv.matFromArray(3, 3, cv.CV_64FC1, homography);
  cv.warpPerspective(
    current,
    onReference,
    h,
    new cv.Size(reference.cols, reference.rows),
    cv.INTER_LINEAR,
    cv.BORDER_CONSTANT,
    new cv.Scalar(-1),
  );
  h.delete();
  return onReference;
}

/**
 * The reference's pixels that agree with the current image registered by `homography`: each
 * image normalised to zero mean and unit spread, and a pixel left out (with its neighbours) where
 * the residual is far above the median: what changed between the shots.
 */
function agreeing(cv: OpenCv, reference: Mat, current: Mat, homography: Homography): Mat {
  const onReference = onReferenceGrid(cv, reference, current, homography);
  const a = reference.data32F;
  const b = onReference.data32F;
  const n = a.length;
  const inside = new Uint8Array(n);
  for (let i = 0; i < n; i++) inside[i] = (b[i] as number) >= 0 ? 1 : 0;
  const [meanA, spreadA] = moments(a, inside);
  const [meanB, spreadB] = moments(b, inside);
  const residual = new cv.Mat(reference.rows, reference.cols, cv.CV_32FC1);
  const r = residual.data32F;
  for (let i = 0; i < n; i++)
    if (inside[i])
      r[i] = Math.abs(((a[i] as number) - meanA) / spreadA - ((b[i] as number) - meanB) / spreadB);
  // Averaged over a neighbourhood: a changed area stays high, a thin misregistered edge does not.
  cv.blur(residual, residual, new cv.Size(OUTLIER_WINDOW, OUTLIER_WINDOW));
  const limit = Math.max(OUTLIER_FACTOR * median(r, inside), OUTLIER_FLOOR);
  const outlier = new cv.Mat(reference.rows, reference.cols, cv.CV_8UC1);
  // Mat.data is a getter that makes a new view on every read: one view per loop, not per pixel.
  const marks = outlier.data;
  for (let i = 0; i < n; i++) marks[i] = inside[i] && (r[i] as number) > limit ? 255 : 0;
  residual.delete();
  onReference.delete();
  const kernel = cv.Mat.ones(5, 5, cv.CV_8UC1);
  cv.dilate(outlier, outlier, kernel);
  kernel.delete();
  const dilated = outlier.data;
  for (let i = 0; i < n; i++) dilated[i] = dilated[i] ? 0 : 255;
  return outlier;
}

function moments(values: Float32Array, inside: Uint8Array): [number, number] {
  let sum = 0;
  let squares = 0;
  let count = 0;
  for (let i = 0; i < values.length; i++) {
    if (!inside[i]) continue;
    const v = values[i] as number;
    sum += v;
    squares += v * v;
    count++;
  }
  const mean = count > 0 ? sum / count : 0;
  return [mean, Math.sqrt(Math.max(1e-6, count > 0 ? squares / count - mean * mean : 1))];
}

function median(values: Float32Array, inside: Uint8Array): number {
  const picked: number[] = [];
  for (let i = 0; i < values.length; i += 3) if (inside[i]) picked.push(values[i] as number);
  picked.sort((x, y) => x - y);
  return picked[picked.length >> 1] ?? 0;
}

/** The grids laid over each other, stretched where their sizes differ. */
function stretch(reference: GrayGrid, current: GrayGrid): Homography {
  return [reference.cols / current.cols, 0, 0, 0, reference.rows / current.rows, 0, 0, 0, 1];
}

/** The grid area-averaged by a whole factor, as a float Mat. */
function shrink(cv: OpenCv, image: GrayGrid, factor: number): Mat {
  const full = cv.matFromArray(image.rows, image.cols, cv.CV_32FC1, image.gray);
  if (factor === 1) return full;
  const small = new cv.Mat();
  const size = new cv.Size(Math.floor(image.cols / factor), Math.floor(image.rows / factor));
  cv.resize(full, small, size, 0, 0, cv.INTER_AREA);
  full.delete();
  return small;
}

/**
 * A homography between grids as one between the grids they were area-averaged from by whole
 * factors (a factor under 1 goes the other way, onto a coarser grid). Pixel c of a grid averages
 * pixels c*f .. c*f+f-1, so its centre is f*c + (f-1)/2 on the finer one.
 */
export function rescale(h: Homography, referenceFactor: number, currentFactor: number): Homography {
  const toCoarse = (f: number): Homography => [
    1 / f,
    0,
    -(f - 1) / (2 * f),
    0,
    1 / f,
    -(f - 1) / (2 * f),
    0,
    0,
    1,
  ];
  const toFine = (f: number): Homography => [f, 0, (f - 1) / 2, 0, f, (f - 1) / 2, 0, 0, 1];
  return multiply(toFine(referenceFactor), multiply(h, toCoarse(currentFactor)));
}

function multiply(a: Homography, b: Homography): Homography {
  const out = new Array<number>(9).fill(0);
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++)
      for (let k = 0; k < 3; k++)
        out[3 * r + c] = (out[3 * r + c] as number) + (a[3 * r + k] as number) * (b[3 * k + c] as number);
  return out as Homography;
}

export function apply(h: Homography, x: number, y: number): [number, number] {
  const w = h[6] * x + h[7] * y + h[8];
  return [(h[0] * x + h[1] * y + h[2]) / w, (h[3] * x + h[4] * y + h[5]) / w];
}

/** Share of the current grid whose registered place lies in the reference, sampled every 4 pixels. */
function overlapOf(h: Homography, reference: GrayGrid, current: GrayGrid): number {
  let inside = 0;
  let total = 0;
  for (let y = 0; y < current.rows; y += 4) {
    for (let x = 0; x < current.cols; x += 4) {
      const [u, v] = apply(h, x, y);
      total++;
      if (u >= 0 && v >= 0 && u <= reference.cols - 1 && v <= reference.rows - 1) inside++;
    }
  }
  return total > 0 ? inside / total : 0;
}

/**
 * 8-bit luma with its histogram equalised: ORB's FAST threshold is a fixed 20 levels in this build,
 * so a smooth, low-contrast scene is stretched first to give enough corners.
 */
function toMat8(cv: OpenCv, image: GrayGrid): Mat {
  const mat = new cv.Mat(image.rows, image.cols, cv.CV_8UC1);
  const bytes = mat.data;
  for (let i = 0; i < image.gray.length; i++) bytes[i] = image.gray[i] as number;
  cv.equalizeHist(mat, mat);
  return mat;
}
