import { onFrame } from '../osd/frame-space';
import { buildOverlay, type Overlay, type OverlayObject, type OverlayZone } from '../osd/overlay';
import { type RasterOverlay, rasterise } from '../osd/raster';
import { toOverlayObject } from '../osd/snapshot';
import type { AnalysedFrame } from '../pipeline/task-pipeline';
import type { Osd } from '../tasks/schema';
import type { FrameSize } from '../vision/types';

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

/**
 * What one AI video draws: the zones and objects of its applications from the latest analysed
 * frame, held over the frames in between (the video runs at the source rate, the analysis slower),
 * with objects that one or two analyses missed kept at their last place. The drawings are the
 * shared OSD renderer's (engine/osd) with the task's osd settings. Zones and objects are separate
 * layers: boxes move with every analysis, while a zone (whose fill is costly to rasterise) changes
 * only when it becomes occupied or free.
 */
export class LiveOverlay {
  private readonly objects = new Map<string, { object: OverlayObject; missed: number }>();
  private zones: OverlayZone[] = [];
  private size: FrameSize | null = null;
  private readonly zoneLayer = new RasterLayer();
  private readonly objectLayer = new RasterLayer();

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
    const seen = new Set<string>();
    for (const overlay of mine) {
      const placed = place([], overlay.objects.map(toOverlayObject)).objects;
      overlay.objects.forEach((object, i) => {
        // A removed object's area has no track: its zone's name tells it apart.
        const key = `${overlay.appId}\u0000${object.track_id || `removed\u0000${object.name}`}`;
        seen.add(key);
        this.objects.set(key, { object: placed[i] as OverlayObject, missed: 0 });
      });
    }
    for (const [key, entry] of this.objects) {
      if (seen.has(key)) continue;
      entry.missed += 1;
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

  /** The rasters to blend, in order, on a frame of this size (none when nothing is drawn on it). */
  rastersFor(width: number, height: number): RasterOverlay[] {
    const rasters: RasterOverlay[] = [];
    for (const layer of [this.zoneLayer, this.objectLayer]) {
      const raster = layer.raster;
      if (raster && raster.frameWidth === width && raster.frameHeight === height) rasters.push(raster);
    }
    return rasters;
  }

  /** Why the last rasterisation failed; '' when it worked. */
  get lastError(): string {
    return this.zoneLayer.lastError || this.objectLayer.lastError;
  }

  private refresh(): void {
    const size = this.size;
    if (!size) return;
    const layer = (zones: readonly OverlayZone[], objects: readonly OverlayObject[]) =>
      buildOverlay({ width: size.width, height: size.height, osd: this.osd, zones, objects });
    this.zoneLayer.update(layer(this.zones, []), size);
    const objects = [...this.objects.values()].map((entry) => entry.object);
    this.objectLayer.update(layer([], objects), size);
  }
}
