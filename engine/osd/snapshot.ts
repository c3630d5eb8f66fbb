import type { Frame } from '../inference/types';
import type { ShownObject } from '../rules/evaluate';
import type { Osd } from '../tasks/schema';
import { buildOverlay, type OverlayObject, type OverlayZone } from './overlay';
import { type RasterOverlay, rasterise } from './raster';
import { drawLayers, encodeJpeg } from './render';

// A zone is drawn the same on every snapshot until it is edited or its occupancy flips, and its
// fill is the costliest part to rasterise: the last few are kept, per frame size.
const ZONE_LAYERS_KEPT = 32;
const zoneLayers = new Map<string, Promise<RasterOverlay>>();

/**
 * One application's results drawn on the frame, as the base64 JPEG a fired rule carries. The zone
 * and the objects are separate layers, blended in that order, the zone's layer reused.
 */
export async function appSnapshot(
  frame: Frame,
  osd: Required<Osd>,
  zone: OverlayZone,
  objects: readonly ShownObject[],
): Promise<string> {
  const { width, height } = frame;
  const objectsOverlay = buildOverlay({
    width,
    height,
    osd,
    zones: [],
    objects: objects.map(toOverlayObject),
  });
  const layers = await Promise.all([
    zoneLayer(width, height, osd, zone),
    objectsOverlay && rasterise(objectsOverlay, width, height),
  ]);
  return (await encodeJpeg(drawLayers(frame, layers), width, height)).toString('base64');
}

function zoneLayer(
  width: number,
  height: number,
  osd: Required<Osd>,
  zone: OverlayZone,
): Promise<RasterOverlay> | null {
  const overlay = buildOverlay({ width, height, osd, zones: [zone], objects: [] });
  if (!overlay) return null;
  const key = `${width}x${height} ${overlay.svg}`;
  let layer = zoneLayers.get(key);
  if (layer) {
    // Most recently used goes last, so the first entry is the one to evict.
    zoneLayers.delete(key);
  } else {
    layer = rasterise(overlay, width, height);
    layer.catch(() => zoneLayers.delete(key));
  }
  zoneLayers.set(key, layer);
  if (zoneLayers.size > ZONE_LAYERS_KEPT) zoneLayers.delete(zoneLayers.keys().next().value as string);
  return layer;
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
  };
}
