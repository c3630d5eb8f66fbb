import { onFrame } from '../osd/frame-space';
import { buildOverlay, type Overlay, type OverlayObject, type OverlayZone } from '../osd/overlay';
import { paintObjectsNow } from '../osd/paint';
import { blend, type RasterOverlay, rasterise } from '../osd/raster';
import { toOverlayObject } from '../osd/snapshot';
import type { AnalysedFrame } from '../pipeline/task-pipeline';
import type { Osd } from '../tasks/schema';
import type { FrameSize } from '../vision/types';
import { type BoxMotion, missed, observe, predict } from './box-motion';

/**
 * How many analysed frames in a row an object may be missing before its box goes: a detector that
 * misses a person for a frame or two must not make the box blink in a video at the source rate.
 */
export const LINGER_FRAMES = 2;

/**
 * One layer of drawings, rasterised only when its SVG changes and one rasterisation at a time: a
 * change while one runs is rasterised after it.
 */
class RasterLayer {
  private svg = '';
  private rendering = false;
  private next: { overlay: Overlay | null; size: FrameSize } | null = null;
  raster: RasterOverlay | null = null;
  lastError = '';

  update(overlay: Overlay | null, size: FrameSize): void {
    if (this.rendering) {
      this.next = { overlay, size };
      return;
    }
    if (!overlay) {
      this.svg = '';
      this.raster = null;
      return;
    }
    if (overlay.svg === this.svg) return;
    this.svg = overlay.svg;
    this.rendering = true;
    rasterise(overlay, size.width, size.height)
      .then((raster) => {
        this.raster = raster;
        this.lastError = '';
      })
      .catch((error: Error) => {
        this.lastError = error.message;
      })
      .finally(() => {
        this.rendering = false;
        const next = this.next;
        this.next = null;
        if (next) this.update(next.overlay, next.size);
      });
  }
}

/** One object as the video draws it: its look from the latest analysis, its box from its motion. */
interface Shown {
  look: OverlayObject;
  motion: BoxMotion;
  /** Analyses in a row that missed it. */
  missed: number;
}

/** The objects of one analysed frame with their apps, one per tracked object (its key). */
export interface AppObject {
  appName: string;
  object: OverlayObject;
}

/**
 * One object per track, however many apps show it: two apps (or rules) watching one class would
 * otherwise draw two boxes and two tags on each person. The merged tag names the class (each name
 * the apps give it) and the apps: "person · loiter, intrusion". A removed object's area, which has
 * no track, stays one per app and zone.
 */
export function oneLabelPerObject(
  objects: ReadonlyArray<AppObject & { key: string }>,
): Map<string, OverlayObject> {
  const byKey = new Map<string, Array<AppObject>>();
  for (const { key, ...shown } of objects) byKey.set(key, [...(byKey.get(key) ?? []), shown]);
  const merged = new Map<string, OverlayObject>();
  for (const [key, shown] of byKey) {
    const first = shown[0] as AppObject;
    const apps = [...new Set(shown.map((one) => one.appName))];
    if (apps.length < 2) {
      merged.set(key, first.object);
      continue;
    }
    const names = [...new Set(shown.map((one) => one.object.name))].join('/');
    merged.set(key, { ...first.object, name: `${names} · ${apps.join(', ')}` });
  }
  return merged;
}

/**
 * What one AI video draws: the zones of its applications from the latest analysed frame, and one
 * box and tag per tracked object, moved on between analyses to where the object is on the frame
 * shown (box-motion.ts); an object that one or two analyses missed is kept, stopped where it was due. The drawings
 * are the shared OSD renderer's (engine/osd) with the task's osd settings. Zones are one raster layer,
 * redrawn only when they change (their outline is costly to rasterise); boxes are painted on each
 * frame, their tags copied from tiles rasterised once (osd/paint.ts).
 */
export class LiveOverlay {
  private readonly objects = new Map<string, Shown>();
  private zones: OverlayZone[] = [];
  private size: FrameSize | null = null;
  private readonly zoneLayer = new RasterLayer();

  constructor(
    private readonly appIds: readonly string[],
    private osd: Required<Osd>,
  ) {}

  onAnalysed(frame: AnalysedFrame): void {
    const mine = frame.overlays.filter((overlay) => this.appIds.includes(overlay.appId));
    // Drawn on the video's frames, which may be scaled down from the source the results are in.
    const place = (zones: OverlayZone[], objects: OverlayObject[]) =>
      onFrame({ zones, objects }, frame.size, frame.frameSize);
    this.zones = place(
      mine.flatMap((overlay) => [overlay.zone, ...overlay.areas]),
      [],
    ).zones;
    const found = mine.flatMap((overlay) => {
      const placed = place([], overlay.objects.map(toOverlayObject)).objects;
      return overlay.objects.map((object, i) => ({
        // Track ids are unique across a task's models; a removed object's area has none: its app
        // and zone's name tell it apart.
        key: object.track_id || `removed\u0000${overlay.appId}\u0000${object.name}`,
        appName: overlay.appName ?? overlay.appId,
        object: placed[i] as OverlayObject,
      }));
    });
    const at = frame.shownAt ?? performance.now();
    const seen = oneLabelPerObject(found);
    for (const [key, look] of seen) {
      const motion = observe(look.kind === 'removed' ? undefined : this.objects.get(key)?.motion, look, at);
      this.objects.set(key, { look, motion, missed: 0 });
    }
    for (const [key, entry] of this.objects) {
      if (seen.has(key)) continue;
      entry.missed += 1;
      entry.motion = missed(entry.motion, at);
      if (entry.missed > LINGER_FRAMES) this.objects.delete(key);
    }
    this.size = frame.frameSize;
    this.refresh();
  }

  /** New osd settings (update-task) apply from the next frame drawn. */
  setOsd(osd: Required<Osd>): void {
    this.osd = osd;
    this.refresh();
  }

  /** The objects as drawn on a frame shown at `at` (box-motion.ts frameTime), in the video's pixels. */
  objectsAt(at: number): OverlayObject[] {
    return [...this.objects.values()].flatMap(({ look, motion }) => {
      const box = predict(motion, at);
      return box ? [{ ...look, ...box }] : [];
    });
  }

  /** Draws the zones and the objects on a frame of this size shown at `at` (nothing on another size). */
  draw(pixels: Uint8Array, width: number, height: number, at: number): void {
    const size = this.size;
    if (!size || size.width !== width || size.height !== height) return;
    const zones = this.zoneLayer.raster;
    if (zones && zones.frameWidth === width && zones.frameHeight === height) blend(pixels, zones);
    paintObjectsNow(pixels, width, height, this.objectsAt(at), this.osd);
  }

  /** Why the last rasterisation failed; '' when it worked. */
  get lastError(): string {
    return this.zoneLayer.lastError;
  }

  private refresh(): void {
    const size = this.size;
    if (!size) return;
    const overlay = buildOverlay({
      width: size.width,
      height: size.height,
      osd: this.osd,
      zones: this.zones,
      objects: [],
    });
    this.zoneLayer.update(overlay, size);
  }
}
