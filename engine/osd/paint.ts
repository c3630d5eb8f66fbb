import sharp from 'sharp';
import type { Osd } from '../tasks/schema';
import type { PixelBox } from './label-placement';
import {
  dashRects,
  type LabelLayout,
  labelSvg,
  type ObjectLayout,
  type OverlayObject,
  objectLayouts,
  type Rgb,
} from './overlay';
import { RecentPromises } from './recent';

/**
 * Objects painted straight into a packed RGB frame, pixel for pixel as buildOverlay's SVG draws them:
 * boxes are rings with whole-pixel edges, so they are filled directly, and a tag is opaque (its text
 * is drawn on its own fill), so each distinct tag is rasterised once and then copied. A snapshot thus
 * costs no SVG rasterising for the objects of a scene it has seen before, where boxes move every
 * frame but their tags repeat.
 */
export async function paintObjects(
  pixels: Uint8Array,
  width: number,
  height: number,
  objects: readonly OverlayObject[],
  osd: Required<Osd>,
): Promise<void> {
  const layouts = objectLayouts(objects, osd, width, height);
  const labels = layouts.map((layout) => layout.label).filter((label) => label !== null);
  const tiles = new Map(
    await Promise.all(labels.map(async (label) => [label, await labelTile(label)] as const)),
  );
  paintLayouts(pixels, width, height, layouts, (label) => tiles.get(label));
}

/**
 * The same, at once, for a video frame that cannot wait: a tag not rasterised yet is asked for and
 * left out of this frame (it shows from the next frames on), the boxes are all painted.
 */
export function paintObjectsNow(
  pixels: Uint8Array,
  width: number,
  height: number,
  objects: readonly OverlayObject[],
  osd: Required<Osd>,
): void {
  const layouts = objectLayouts(objects, osd, width, height);
  paintLayouts(pixels, width, height, layouts, (label) => settled.get(labelTile(label)));
}

function paintLayouts(
  pixels: Uint8Array,
  width: number,
  height: number,
  layouts: readonly ObjectLayout[],
  tileOf: (label: LabelLayout) => Uint8Array | undefined,
): void {
  // Tags go over every box, as in the SVG.
  for (const { box, border, dashed, color } of layouts) {
    if (!box) continue;
    if (!dashed) paintRing(pixels, width, box, border, color);
    else
      for (const dash of dashRects(box, border))
        fillRect(pixels, width, dash.x1, dash.y1, dash.x2, dash.y2, color);
  }
  for (const { label } of layouts) {
    const tile = label && tileOf(label);
    if (label && tile) paintTile(pixels, width, height, label, tile);
  }
}

/** The border inside the box, filled whole when the box is too small to have a hole. */
function paintRing(pixels: Uint8Array, frameWidth: number, box: PixelBox, inset: number, rgb: Rgb): void {
  const { x1, y1, x2, y2 } = box;
  if (x2 - x1 <= 2 * inset || y2 - y1 <= 2 * inset) {
    fillRect(pixels, frameWidth, x1, y1, x2, y2, rgb);
    return;
  }
  fillRect(pixels, frameWidth, x1, y1, x2, y1 + inset, rgb);
  fillRect(pixels, frameWidth, x1, y2 - inset, x2, y2, rgb);
  fillRect(pixels, frameWidth, x1, y1 + inset, x1 + inset, y2 - inset, rgb);
  fillRect(pixels, frameWidth, x2 - inset, y1 + inset, x2, y2 - inset, rgb);
}

function fillRect(
  pixels: Uint8Array,
  frameWidth: number,
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  { r, g, b }: Rgb,
): void {
  for (let y = y1; y < y2; y++) {
    const end = (y * frameWidth + x2) * 3;
    for (let at = (y * frameWidth + x1) * 3; at < end; at += 3) {
      pixels[at] = r;
      pixels[at + 1] = g;
      pixels[at + 2] = b;
    }
  }
}

/** Copies a tag's RGB tile to its place, clipped to the frame (a tag wider than the frame is cut). */
function paintTile(
  pixels: Uint8Array,
  frameWidth: number,
  frameHeight: number,
  label: LabelLayout,
  tile: Uint8Array,
): void {
  const columns = Math.min(label.width, frameWidth - label.x);
  const rows = Math.min(label.height, frameHeight - label.y);
  for (let row = 0; row < rows; row++) {
    const from = row * label.width * 3;
    pixels.set(tile.subarray(from, from + columns * 3), ((label.y + row) * frameWidth + label.x) * 3);
  }
}

// A scene's tags (class name and track id) repeat from frame to frame; a few hundred cover many
// tracks at ~7 KB each.
const tiles = new RecentPromises<Uint8Array>(256);
/** The tiles rasterised so far, by the promise the cache holds: an evicted one goes with its promise. */
const settled = new WeakMap<Promise<Uint8Array>, Uint8Array>();

/** The tag rasterised on its own (librsvg through sharp), as opaque packed RGB. */
function labelTile(label: LabelLayout): Promise<Uint8Array> {
  const svg = labelSvg(label);
  return tiles.get(svg, () => {
    const made = rasteriseTag(label, svg);
    made.then(
      (tile) => settled.set(made, tile),
      () => undefined,
    );
    return made;
  });
}

async function rasteriseTag(label: LabelLayout, svg: string): Promise<Uint8Array> {
  const { data, info } = await sharp(Buffer.from(svg))
    .flatten({ background: label.color.hex })
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.width !== label.width || info.height !== label.height || info.channels !== 3)
    throw new Error(`OSD tag rasterised to ${info.width}x${info.height}x${info.channels}, not its own size`);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
