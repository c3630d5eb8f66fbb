import type { PixelSize } from '../media/analysis-size';
import { scalePolygon } from '../vision/geometry';
import type { OverlayObject, OverlayZone } from './overlay';

/**
 * Zones and boxes, which are in the source's pixels, placed on the frame they are drawn on: a
 * snapshot or AI video frame is the source bounded for analysis (media/analysis-size.ts).
 */
export function onFrame(
  drawings: { zones: readonly OverlayZone[]; objects: readonly OverlayObject[] },
  source: PixelSize,
  frame: PixelSize,
): { zones: OverlayZone[]; objects: OverlayObject[] } {
  const sx = frame.width / source.width;
  const sy = frame.height / source.height;
  if (sx === 1 && sy === 1) return { zones: [...drawings.zones], objects: [...drawings.objects] };
  return {
    zones: drawings.zones.map((zone) => ({ ...zone, points: scalePolygon(zone.points, source, frame) })),
    objects: drawings.objects.map((object) => ({
      ...object,
      x1: object.x1 * sx,
      y1: object.y1 * sy,
      x2: object.x2 * sx,
      y2: object.y2 * sy,
    })),
  };
}
