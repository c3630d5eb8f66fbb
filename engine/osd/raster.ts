import sharp from 'sharp';
import type { Overlay } from './overlay';

/**
 * The shared OSD drawings (engine/osd/overlay.ts) rasterised once and laid out for blending onto
 * every frame of a live video until the drawings change: the opaque runs of each row are copied as
 * they are, and only the partly transparent pixels (anti-aliased edges, text, zone fills) are mixed,
 * in runs of one colour and opacity (a zone's fill is one long run per row).
 */
export interface RasterOverlay {
  frameWidth: number;
  frameHeight: number;
  /** Opaque runs: where in the frame (byte offset) and their RGB bytes. */
  opaque: Array<{ offset: number; rgb: Uint8Array }>;
  /** Partly transparent runs, three numbers each: byte offset in the frame, pixels, RGBA as 0xRRGGBBAA. */
  mixed: Uint32Array;
}

/** Rasterises the overlay (librsvg through sharp) and groups its pixels for blend(). */
export async function rasterise(
  overlay: Overlay,
  frameWidth: number,
  frameHeight: number,
): Promise<RasterOverlay> {
  const { data: rgba, info } = await sharp(Buffer.from(overlay.svg))
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.width !== overlay.width || info.height !== overlay.height || info.channels !== 4) {
    throw new Error(
      `OSD overlay rasterised to ${info.width}x${info.height}x${info.channels}, not its own size`,
    );
  }
  let opaqueBytes = 0;
  for (let i = 3; i < rgba.length; i += 4) if (rgba[i] === 255) opaqueBytes += 3;
  const packed = new Uint8Array(opaqueBytes);
  const opaque: RasterOverlay['opaque'] = [];
  const mixed: number[] = [];
  let packedAt = 0;
  for (let row = 0; row < overlay.height; row++) {
    let source = row * overlay.width * 4;
    let target = ((overlay.top + row) * frameWidth + overlay.left) * 3;
    let runStart = -1;
    let runTarget = 0;
    let mixedColor = -1;
    for (let column = 0; column < overlay.width; column++, source += 4, target += 3) {
      const alpha = rgba[source + 3] as number;
      if (alpha === 255) {
        mixedColor = -1;
        if (runStart < 0) {
          runStart = packedAt;
          runTarget = target;
        }
        packed[packedAt++] = rgba[source] as number;
        packed[packedAt++] = rgba[source + 1] as number;
        packed[packedAt++] = rgba[source + 2] as number;
        continue;
      }
      if (runStart >= 0) {
        opaque.push({ offset: runTarget, rgb: packed.subarray(runStart, packedAt) });
        runStart = -1;
      }
      if (alpha === 0) {
        mixedColor = -1;
        continue;
      }
      const color =
        (((rgba[source] as number) << 24) |
          ((rgba[source + 1] as number) << 16) |
          ((rgba[source + 2] as number) << 8) |
          alpha) >>>
        0;
      // The same colour and opacity as the pixel before: the run grows.
      if (color === mixedColor) mixed[mixed.length - 2] = (mixed[mixed.length - 2] as number) + 1;
      else mixed.push(target, 1, color);
      mixedColor = color;
    }
    if (runStart >= 0) opaque.push({ offset: runTarget, rgb: packed.subarray(runStart, packedAt) });
  }
  return { frameWidth, frameHeight, opaque, mixed: Uint32Array.from(mixed) };
}

/** Draws the raster onto a packed RGB frame of its size, in place. The live video's hot path. */
export function blend(frame: Uint8Array, raster: RasterOverlay): void {
  for (const run of raster.opaque) frame.set(run.rgb, run.offset);
  const { mixed } = raster;
  for (let k = 0; k < mixed.length; k += 3) {
    let at = mixed[k] as number;
    const end = at + (mixed[k + 1] as number) * 3;
    const color = mixed[k + 2] as number;
    const alpha = color & 0xff;
    const rest = 255 - alpha;
    // The overlay's share of each channel, with +127 so that the truncating Uint8Array store rounds
    // to nearest: the same arithmetic as engine/osd/render.ts.
    const r = (color >>> 24) * alpha + 127;
    const g = ((color >>> 16) & 0xff) * alpha + 127;
    const b = ((color >>> 8) & 0xff) * alpha + 127;
    for (; at < end; at += 3) {
      frame[at] = (r + (frame[at] as number) * rest) / 255;
      frame[at + 1] = (g + (frame[at + 1] as number) * rest) / 255;
      frame[at + 2] = (b + (frame[at + 2] as number) * rest) / 255;
    }
  }
}
