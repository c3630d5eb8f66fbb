import type { ShownObject } from '../rules/rule-kind';
import type { Osd } from '../tasks/schema';
import type { Frame } from '../vision/types';
import { onFrame } from './frame-space';
import { buildOverlay, type OverlayObject, type OverlayZone } from './overlay';
import { paintObjects } from './paint';
import { type RasterOverlay, rasterise } from './raster';
import { RecentPromises } from './recent';
import { drawLayers, encodeJpeg } from './render';

// A zone is drawn the same on every snapshot until it is edited or its occupancy flips, and its
// fill is the costliest part to rasterise: the last few are kept, per frame size.
const zoneLayers = new RecentPromises<RasterOverlay>(32);

/**
 * One application's results drawn on the frame, as the base64 JPEG a fired rule carries: the zone
 * blended from its kept layer, then the objects painted over it. Zone and objects are in pixels of
 * `source` (the frame's own size when not given), which the frame may be scaled down from.
 */
export async function appSnapshot(
  frame: Frame,
  osd: Required<Osd>,
  zones: readonly OverlayZone[],
  objects: readonly ShownObject[],
  source: { width: number; height: number } = frame,
): Promise<string> {
  const { width, height } = frame;
  const placed = onFrame({ zones, objects: objects.map(toOverlayObject) }, source, frame);
  const pixels = drawLayers(frame, [await zoneLayer(width, height, osd, placed.zones)]);
  await paintObjects(pixels, width, height, placed.objects, osd);
  return (await encodeJpeg(pixels, width, height)).toString('base64');
}

function zoneLayer(
  width: number,
  height: number,
  osd: Required<Osd>,
  zones: readonly OverlayZone[],
): Promise<RasterOverlay> | null {
  const overlay = buildOverlay({ width, height, osd, zones, objects: [] });
  if (!overlay) return null;
  return zoneLayers.get(`${width}x${height} ${overlay.svg}`, () => rasterise(overlay, width, height));
}

/** A reported object (centre and size) as the box the overlay draws. */
export function toOverlayObject(object: ShownObject): OverlayObject {
  const x1 = object.x - object.w / 2;
  const y1 = object.y - object.h / 2;
  return {
    x1,
    y1,
    x2: x1 + object.w,
    y2: y1 + object.h,
    color: object.color,
    name: object.name,
    trackId: object.track_id,
    ...(object.speed !== undefined && { speed: object.speed }),
    ...(object.removed !== undefined && { kind: 'removed' as const }),
  };
}
