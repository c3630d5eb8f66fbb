import type { Box, Detection, FrameSize } from '../vision/types';

/**
 * A model's detections on a frame that ffmpeg scaled down from its source (media/analysis-size.ts),
 * in the source's pixels, where the contract has every coordinate (polygons, rules' pixel sizes,
 * events). The one place boxes leave the frame's pixels: tracks, rules and events take them as given.
 */
export function detectionsInSource(
  detections: Detection[],
  frame: FrameSize,
  source: FrameSize,
): Detection[] {
  if (frame.width === source.width && frame.height === source.height) return detections;
  const sx = source.width / frame.width;
  const sy = source.height / frame.height;
  return detections.map((detection) => ({
    ...detection,
    x1: detection.x1 * sx,
    y1: detection.y1 * sy,
    x2: detection.x2 * sx,
    y2: detection.y2 * sy,
    ...(detection.area === undefined ? {} : { area: detection.area * sx * sy }),
  }));
}

/** The other way, for the motion gate: a track's box (source pixels) on the analysed frame. */
export function boxInFrame(box: Box, frame: FrameSize, source: FrameSize): Box {
  const sx = frame.width / source.width;
  const sy = frame.height / source.height;
  return { x1: box.x1 * sx, y1: box.y1 * sy, x2: box.x2 * sx, y2: box.y2 * sy };
}
