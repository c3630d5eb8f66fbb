import { nms } from '../inference/nms';
import type { Detection, Frame } from '../vision/types';
import type { TaskDetector } from './detectors';
import type { Tile } from './region-plan';

/** The grey of the model's own letterbox padding: the canvas between crops reads as "nothing here". */
const CANVAS_GREY = 114;

/** The tile's pixels: each placement's region copied row by row from the full-resolution frame. */
export function tileFrame(frame: Frame, tile: Tile): Frame {
  const data = new Uint8Array(tile.width * tile.height * 3).fill(CANVAS_GREY);
  for (const { region, x, y } of tile.placements) {
    const rowBytes = (region.x2 - region.x1) * 3;
    for (let row = region.y1; row < region.y2; row++) {
      const from = (row * frame.width + region.x1) * 3;
      data.set(frame.data.subarray(from, from + rowBytes), ((y + row - region.y1) * tile.width + x) * 3);
    }
  }
  return { width: tile.width, height: tile.height, data };
}

/**
 * The tile's detections in the frame's pixels: each goes to the crop its centre lies on (one in the
 * grey between crops is dropped), clipped to that crop.
 */
export function tileDetectionsInFrame(detections: readonly Detection[], tile: Tile): Detection[] {
  const found: Detection[] = [];
  for (const detection of detections) {
    const cx = (detection.x1 + detection.x2) / 2;
    const cy = (detection.y1 + detection.y2) / 2;
    const placement = tile.placements.find(
      ({ region, x, y }) =>
        cx >= x && cx < x + region.x2 - region.x1 && cy >= y && cy < y + region.y2 - region.y1,
    );
    if (!placement) continue;
    const { region, x, y } = placement;
    const dx = region.x1 - x;
    const dy = region.y1 - y;
    found.push({
      ...detection,
      x1: Math.max(region.x1, detection.x1 + dx),
      y1: Math.max(region.y1, detection.y1 + dy),
      x2: Math.min(region.x2, detection.x2 + dx),
      y2: Math.min(region.y2, detection.y2 + dy),
    });
  }
  return found;
}

/**
 * One model on the frame's tiles, one inference each, in turn (a task keeps one job in the shared
 * inference queue at a time, each due when the frame arrived, so a frame once started goes before
 * later ones): its detections in the frame's pixels, where an object cut by two neighbouring crops
 * is kept once by the model's own NMS.
 */
export async function detectTiles(
  detector: TaskDetector,
  frame: Frame,
  tiles: readonly Tile[],
  due?: number,
): Promise<{ detections: Detection[]; inferenceMs: number }> {
  const found: Detection[] = [];
  let inferenceMs = 0;
  for (const tile of tiles) {
    const result = await detector.detect(tileFrame(frame, tile), due);
    inferenceMs += result.inferenceMs;
    found.push(...tileDetectionsInFrame(result.detections, tile));
  }
  const merge = detector.regions;
  return { detections: merge ? nms(found, merge.nmsIou, merge.classAgnostic) : found, inferenceMs };
}
