import sharp from 'sharp';
import { HEAT_COLUMNS, HEAT_ROWS, type HeatGrid } from '../pipeline/heat-grid';

/**
 * A heat grid drawn over a frame as a PNG: cold cells leave the picture as it is, warm ones tint it
 * from blue through yellow to red. Heat is scaled by log(1 + count) against the hottest cell, so a
 * spot where someone stood for minutes does not wash out the paths walked through.
 */

type Rgb = readonly [number, number, number];
const RAMP: readonly Rgb[] = [
  [0, 0, 255],
  [0, 255, 255],
  [255, 255, 0],
  [255, 0, 0],
];

/** Blue -> cyan -> yellow -> red along t in 0..1. */
function ramp(t: number): Rgb {
  const at = t * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(at));
  const [a, b, f] = [RAMP[i] as Rgb, RAMP[i + 1] as Rgb, at - i];
  const mix = (c: 0 | 1 | 2) => Math.round(a[c] + (b[c] - a[c]) * f);
  return [mix(0), mix(1), mix(2)];
}

/** Opacity of the hottest cell; the coldest warm one gets a third of it. */
const MAX_ALPHA = 0.6;

/** The grid as RGBA pixels, one per cell. */
export function heatPixels(grid: HeatGrid): Buffer {
  const pixels = Buffer.alloc(HEAT_COLUMNS * HEAT_ROWS * 4);
  const top = Math.log1p(Math.max(...grid.cells));
  grid.cells.forEach((count, i) => {
    if (count === 0) return;
    const t = Math.log1p(count) / top;
    pixels.set([...ramp(t), Math.round((255 * MAX_ALPHA * (1 + 2 * t)) / 3)], i * 4);
  });
  return pixels;
}

/** The frame (RGB) scaled to `width` with the heat over it, as PNG. */
export async function heatmapPng(
  frame: { data: Buffer; width: number; height: number },
  grid: HeatGrid,
  width: number,
): Promise<Buffer> {
  const outWidth = Math.min(width, frame.width);
  const outHeight = Math.round((frame.height * outWidth) / frame.width);
  const heat = await sharp(heatPixels(grid), { raw: { width: HEAT_COLUMNS, height: HEAT_ROWS, channels: 4 } })
    .resize(outWidth, outHeight, { fit: 'fill', kernel: 'cubic' })
    .raw()
    .toBuffer();
  // sharp composites before it resizes: the frame is scaled in a pass of its own.
  const base = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .resize(outWidth, outHeight)
    .raw()
    .toBuffer();
  const size = { width: outWidth, height: outHeight };
  return sharp(base, { raw: { ...size, channels: 3 } })
    .composite([{ input: heat, raw: { ...size, channels: 4 } }])
    .removeAlpha()
    .png()
    .toBuffer();
}
