import { APP_TYPE, type AppType } from '../rules/schema';
import { isSelfIntersecting, polygonArea, toPoints } from '../vision/geometry';
import type { Point } from '../vision/types';
import type { Polygon } from './schema';

/**
 * What is wrong with a polygon for an app of the given type, or null. Shape and ranges are checked
 * by the schema already; this checks the geometry (api-decisions.md, Polygons).
 */
export function polygonProblem(polygon: Polygon, appType: AppType): string | null {
  const points = toPoints(polygon);
  if (points.length === 0) return null;
  if (points.length === 1) return 'a polygon needs at least 3 points (2 for a counting line)';
  if (points.length === 2) {
    if (appType !== APP_TYPE.timeSeries)
      return 'a 2-point counting line is only for time-series applications (type 3); a region needs at least 3 points';
    const [a, b] = points as [Point, Point];
    return a[0] === b[0] && a[1] === b[1] ? 'the counting line has two identical points' : null;
  }
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as Point;
    const q = points[(i + 1) % points.length] as Point;
    if (p[0] === q[0] && p[1] === q[1]) return `points ${i} and ${(i + 1) % points.length} are identical`;
  }
  if (isSelfIntersecting(points)) return 'the polygon crosses itself';
  if (polygonArea(points) < 1) return 'the polygon has no area (its points are on one line)';
  return null;
}
