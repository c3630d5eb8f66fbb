import type { InputSize } from '../inference/decode';
import type { Box, FrameSize } from '../vision/types';

/**
 * Where the detector looks on a gated frame (motion-gate.ts): motion blobs and live tracks' boxes,
 * padded, merged where they overlap, and laid out as crops of the full-resolution frame at the
 * model's input size. Pure: every value here is planned from boxes and sizes alone.
 */

/** Added on each side of a region, as a share of its own size: an object is larger than its moving part. */
export const REGION_PAD_SHARE = 0.25;
/** ...and at least this share of the frame's width: a motion blob's edges are as coarse as the motion grid (160 px wide). */
export const REGION_PAD_MIN_SHARE = 0.02;
/** Most regions one frame is detected on; beyond, the frame is detected in full (the motion is everywhere). */
export const MAX_REGIONS = 8;
/**
 * Most inferences a frame's regions may take. A crop costs one inference at the model's input size,
 * as does the whole frame: a second tile would cost more than detecting in full.
 */
export const MAX_REGION_TILES = 1;
/** Grey between crops packed on one tile, so a box found on one crop does not run into its neighbour. */
export const TILE_GAP_PX = 8;

/** One region on a tile: the frame's pixels `region` copied at (x, y), at their own scale. */
export interface Placement {
  region: Box;
  x: number;
  y: number;
}

/**
 * One inference: a canvas of the model's input size holding several small crops, or one crop larger
 * than the input, which the model's letterbox shrinks into it (never more than the whole frame's own
 * shrink, since a crop is never larger than the frame).
 */
export interface Tile {
  width: number;
  height: number;
  placements: Placement[];
}

/** The box grown by the padding, in whole pixels inside the frame. */
export function padRegion(box: Box, frame: FrameSize): Box {
  const min = REGION_PAD_MIN_SHARE * frame.width;
  const padX = Math.max(min, REGION_PAD_SHARE * (box.x2 - box.x1));
  const padY = Math.max(min, REGION_PAD_SHARE * (box.y2 - box.y1));
  return {
    x1: Math.max(0, Math.floor(box.x1 - padX)),
    y1: Math.max(0, Math.floor(box.y1 - padY)),
    x2: Math.min(frame.width, Math.ceil(box.x2 + padX)),
    y2: Math.min(frame.height, Math.ceil(box.y2 + padY)),
  };
}

const overlap = (a: Box, b: Box) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
const union = (a: Box, b: Box): Box => ({
  x1: Math.min(a.x1, b.x1),
  y1: Math.min(a.y1, b.y1),
  x2: Math.max(a.x2, b.x2),
  y2: Math.max(a.y2, b.y2),
});

/** Boxes joined where they overlap, until none do (a join can reach a third box), largest first. */
export function mergeRegions(boxes: readonly Box[]): Box[] {
  let merged = [...boxes];
  let joined = true;
  while (joined) {
    joined = false;
    const next: Box[] = [];
    for (const box of merged) {
      const index = next.findIndex((other) => overlap(other, box));
      if (index < 0) {
        next.push(box);
        continue;
      }
      next[index] = union(next[index] as Box, box);
      joined = true;
    }
    merged = next;
  }
  return merged.sort((a, b) => area(b) - area(a));
}

export const area = (box: Box) => (box.x2 - box.x1) * (box.y2 - box.y1);

/**
 * The tiles that cover the regions: a region larger than the input is a tile of its own; smaller
 * ones are packed on input-sized canvases in shelves, tallest first, at their own scale (so a small,
 * distant person keeps every pixel the camera gave it).
 */
export function planTiles(regions: readonly Box[], input: InputSize): Tile[] {
  const tiles: Tile[] = [];
  const small: Box[] = [];
  for (const region of regions) {
    const fits = region.x2 - region.x1 <= input.width && region.y2 - region.y1 <= input.height;
    if (fits) small.push(region);
    else
      tiles.push({
        width: region.x2 - region.x1,
        height: region.y2 - region.y1,
        placements: [{ region, x: 0, y: 0 }],
      });
  }
  small.sort((a, b) => b.y2 - b.y1 - (a.y2 - a.y1));
  let canvas: Tile | null = null;
  let x = 0;
  let shelfY = 0;
  let shelfHeight = 0;
  for (const region of small) {
    const width = region.x2 - region.x1;
    const height = region.y2 - region.y1;
    if (canvas && x + width > input.width) {
      shelfY += shelfHeight + TILE_GAP_PX;
      x = 0;
      shelfHeight = 0;
    }
    if (!canvas || shelfY + height > input.height) {
      canvas = { width: input.width, height: input.height, placements: [] };
      tiles.push(canvas);
      x = 0;
      shelfY = 0;
      shelfHeight = 0;
    }
    canvas.placements.push({ region, x, y: shelfY });
    x += width + TILE_GAP_PX;
    shelfHeight = Math.max(shelfHeight, height);
  }
  return tiles;
}
