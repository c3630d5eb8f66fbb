import type { LineDirection } from '../../../engine/contract';

interface Point {
  x: number;
  y: number;
}

/** What shows a counting line's direction, in display pixels: an arrow across its middle and its sides' letters. */
export interface LineArrow {
  /** The shaft, x1 y1 x2 y2. */
  shaft: [number, number, number, number];
  /** Each head a closed triangle, as flat x y points. */
  heads: number[][];
  /** Where the letters A and B go: beside the middle, on their sides. */
  sideA: Point;
  sideB: Point;
}

/**
 * The arrow of a line from a to b: across its middle, towards side B (right of a->b on the screen,
 * where the engine's cross product is positive) for 'in', side A for 'out', both ways for 'both',
 * as the engine's AI video draws it (engine/osd/overlay.ts); null for a line of no length.
 */
export function lineArrow(a: Point, b: Point, direction: LineDirection, reach = 28): LineArrow | null {
  const length = Math.hypot(b.x - a.x, b.y - a.y);
  if (length === 0) return null;
  const nx = -(b.y - a.y) / length;
  const ny = (b.x - a.x) / length;
  const mid = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
  const at = (k: number) => ({ x: mid.x + nx * k, y: mid.y + ny * k });
  const sign = direction === 'out' ? -1 : 1;
  const tip = at(sign * reach);
  const tail = direction === 'both' ? at(-reach) : mid;
  const head = reach / 2.5;
  const triangle = (point: Point, ux: number, uy: number) => {
    const baseX = point.x - ux * head;
    const baseY = point.y - uy * head;
    return [
      point.x,
      point.y,
      baseX - uy * head * 0.6,
      baseY + ux * head * 0.6,
      baseX + uy * head * 0.6,
      baseY - ux * head * 0.6,
    ];
  };
  const heads = [triangle(tip, sign * nx, sign * ny)];
  if (direction === 'both') heads.push(triangle(tail, -nx, -ny));
  // The letters sit along the line from the arrow, so that neither covers the other.
  const ux = (b.x - a.x) / length;
  const uy = (b.y - a.y) / length;
  const beside = (k: number) => ({
    x: mid.x + ux * reach * 0.8 + nx * k,
    y: mid.y + uy * reach * 0.8 + ny * k,
  });
  return {
    shaft: [tail.x, tail.y, tip.x, tip.y],
    heads,
    sideA: beside(-reach * 0.7),
    sideB: beside(reach * 0.7),
  };
}
