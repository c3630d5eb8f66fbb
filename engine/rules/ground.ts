import { toPoints } from '../vision/geometry';
import type { Point } from '../vision/types';

/**
 * Image pixels to metres on the ground, for speeds and distances: a homography from four reference
 * points (a plane seen in perspective), or a single scale from the package's length_reference.
 */

/** Row-major 3x3 matrix. */
type Mat3 = readonly number[];

export type GroundMap = (p: Point) => Point;

/** Solves A x = b (n x n, row-major) by Gaussian elimination with partial pivoting; null if singular. */
function solve(a: number[][], b: number[]): number[] | null {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) {
      if (Math.abs(m[r]?.[col] ?? 0) > Math.abs(m[pivot]?.[col] ?? 0)) pivot = r;
    }
    const top = m[pivot] as number[];
    if (Math.abs(top[col] ?? 0) < 1e-12) return null;
    [m[col], m[pivot]] = [top, m[col] as number[]];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const row = m[r] as number[];
      const f = (row[col] ?? 0) / (top[col] ?? 1);
      for (let c = col; c <= n; c++) row[c] = (row[c] ?? 0) - f * (top[c] ?? 0);
    }
  }
  return m.map((row, i) => (row[n] ?? 0) / (row[i] ?? 1));
}

/**
 * The homography taking each image point to its ground point (h33 = 1); null when three points of
 * either set are collinear, since no such map exists then.
 */
export function homography(image: readonly Point[], ground: readonly Point[]): Mat3 | null {
  if (image.length !== 4 || ground.length !== 4) return null;
  if (hasCollinearTriple(image) || hasCollinearTriple(ground)) return null;
  const a: number[][] = [];
  const b: number[] = [];
  image.forEach(([x, y], i) => {
    const [u, v] = ground[i] as Point;
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y]);
    b.push(u);
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y]);
    b.push(v);
  });
  const h = solve(a, b);
  return h ? [...h, 1] : null;
}

function hasCollinearTriple(points: readonly Point[]): boolean {
  const [a, b, c, d] = points as [Point, Point, Point, Point];
  const area = (p: Point, q: Point, r: Point) =>
    Math.abs((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]));
  const scale = Math.max(...points.flatMap(([x, y]) => [Math.abs(x), Math.abs(y)]), 1) ** 2;
  return [area(a, b, c), area(a, b, d), area(a, c, d), area(b, c, d)].some((s) => s < 1e-9 * scale);
}

export function applyHomography(h: Mat3, [x, y]: Point): Point {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, k = 0, l = 1] = h;
  const w = g * x + k * y + l;
  return [(a * x + b * y + c) / w, (d * x + e * y + f) / w];
}

/** A calibration as app_configs carries it: four image points (source pixels) and their ground metres. */
export interface Calibration {
  image: number[][];
  ground: number[][];
}

/**
 * The map of an app: its calibration when set, else the scale of the package's length_reference
 * (ground axes along the image's: x right, y down); null when it has neither.
 */
export function groundMap(
  calibration: Calibration | undefined,
  lengthReference: { pixels: number; meters: number } | undefined,
): GroundMap | null {
  if (calibration) {
    const h = homography(toPoints(calibration.image), toPoints(calibration.ground));
    return h && ((p) => applyHomography(h, p));
  }
  if (lengthReference) {
    const scale = lengthReference.meters / lengthReference.pixels;
    return ([x, y]) => [x * scale, y * scale];
  }
  return null;
}
