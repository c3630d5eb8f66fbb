import type { Frame } from '../inference/types';
import type { ShownObject } from '../rules/evaluate';
import type { Osd } from '../tasks/schema';
import { buildOverlay, type OverlayObject, type OverlayZone } from './overlay';
import { renderSnapshot } from './render';

/** One application's results drawn on the frame, as the base64 JPEG a fired rule carries. */
export async function appSnapshot(
  frame: Frame,
  osd: Required<Osd>,
  zone: OverlayZone,
  objects: readonly ShownObject[],
): Promise<string> {
  const overlay = buildOverlay({
    width: frame.width,
    height: frame.height,
    osd,
    zones: [zone],
    objects: objects.map(toOverlayObject),
  });
  return (await renderSnapshot(frame, overlay)).toString('base64');
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
