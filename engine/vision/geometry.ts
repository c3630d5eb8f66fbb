import type { Box, FrameSize, Point, PointList } from './types';

/** Points as a request carried them, as Points: a copy, each [x, y] (the schema has checked there are two). */
export const toPoints = (points: PointList): Point[] => points.map(([x = 0, y = 0]) => [x, y]);

/** Where an object stands: the middle of its box's bottom edge, what regions, zones and lines judge. */
export const footOf = (box: Box): Point => [(box.x1 + box.x2) / 2, box.y2];

/**
 * Points in pixels of a frame of size `from` placed on one of size `to`, x and y scaled apart (a
 * polygon drawn on a source, on a resized source or on the frame it is drawn over); the same points
 * when the sizes match or `from` is unknown.
 */
export function scalePolygon(polygon: number[][], from: FrameSize | null, to: FrameSize): number[][] {
  if (!from || (from.width === to.width && from.height === to.height)) return polygon;
  const sx = to.width / from.width;
  const sy = to.height / from.height;
  return polygon.map(([x = 0, y = 0]) => [x * sx, y * sy]);
}

const cross = (o: Point, a: Point, b: Point) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);

const onSegment = (p: Point, a: Point, b: Point) =>
  Math.min(a[0], b[0]) <= p[0] &&
  p[0] <= Math.max(a[0], b[0]) &&
  Math.min(a[1], b[1]) <= p[1] &&
  p[1] <= Math.max(a[1], b[1]);

/** True when segments ab and cd share at least one point (touching counts). */
export function segmentsIntersect(a: Point, b: Point, c: Point, d: Point): boolean {
  const d1 = cross(c, d, a);
  const d2 = cross(c, d, b);
  const d3 = cross(a, b, c);
  const d4 = cross(a, b, d);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  return (
    (d1 === 0 && onSegment(a, c, d)) ||
    (d2 === 0 && onSegment(b, c, d)) ||
    (d3 === 0 && onSegment(c, a, b)) ||
    (d4 === 0 && onSegment(d, a, b))
  );
}

/** Shoelace area, positive whatever the winding. */
export function polygonArea(points: readonly Point[]): number {
  let twice = 0;
  points.forEach((p, i) => {
    const q = points[(i + 1) % points.length] as Point;
    twice += p[0] * q[1] - q[0] * p[1];
  });
  return Math.abs(twice) / 2;
}

/** True when two non-adjacent edges of the closed polygon touch or cross. */
export function isSelfIntersecting(points: readonly Point[]): boolean {
  const n = points.length;
  const edge = (i: number) => [points[i] as Point, points[(i + 1) % n] as Point] as const;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const adjacent = j === i + 1 || (i === 0 && j === n - 1);
      if (adjacent) continue;
      const [a, b] = edge(i);
      const [c, d] = edge(j);
      if (segmentsIntersect(a, b, c, d)) return true;
    }
  }
  return false;
}

/** Ray casting; points on the boundary count as inside. */
export function pointInPolygon(p: Point, polygon: readonly Point[]): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[i] as Point;
    const b = polygon[j] as Point;
    if (cross(a, b, p) === 0 && onSegment(p, a, b)) return true;
    if (a[1] > p[1] !== b[1] > p[1] && p[0] < ((b[0] - a[0]) * (p[1] - a[1])) / (b[1] - a[1]) + a[0]) {
      inside = !inside;
    }
  }
  return inside;
}
