import type { AppAreas, LineDirection, Osd, Polygon } from '../tasks/schema';
import { type PixelBox, placeLabels } from './label-placement';

/**
 * An app's area: [] the whole frame (nothing drawn), 3+ points a region, 2 points a counting line.
 * Its region is a solid outline as wide as a box's border, never filled (a tint over most of the frame reads like an
 * alarm, and an occupied region is no alarm); a named zone dashed with its name; a mask shaded, as
 * nothing in it counts.
 */
export interface OverlayZone {
  points: Polygon;
  /** '#rrggbb' */
  color: string;
  /** Default 'region' (the contract's polygon). */
  kind?: 'region' | 'zone' | 'mask';
  /** A zone's name, written at its top left. */
  name?: string;
  /** A counting line's direction, drawn as an arrow across its middle; default both. */
  direction?: LineDirection;
}

/** An app's named zones and masks as drawn beside its region (the region is drawn from `polygon`). */
export function areaZones(areas: AppAreas, color: string): OverlayZone[] {
  return [
    ...(areas.zones ?? []).map((zone) => ({
      points: zone.polygon,
      color,
      kind: 'zone' as const,
      name: zone.name,
    })),
    ...(areas.masks ?? []).map((points) => ({ points, color, kind: 'mask' as const })),
  ];
}

/** A detected object in source-frame pixels. */
export interface OverlayObject {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** '#rrggbb' */
  color: string;
  name: string;
  trackId: string;
  /** m/s on the ground, when the app is calibrated: written after the name and track id. */
  speed?: number;
  /** A removed object's changed area: a dashed box tagged "removed" instead of a name and track id. */
  kind?: 'removed';
}

export interface OverlayInput {
  width: number;
  height: number;
  osd: Required<Osd>;
  zones: readonly OverlayZone[];
  objects: readonly OverlayObject[];
}

/**
 * An SVG covering only the part of the frame that has drawings, to be placed at (left, top): the
 * rasterising and blending cost grows with its area, so empty parts of the frame cost nothing.
 */
export interface Overlay {
  svg: string;
  left: number;
  top: number;
  width: number;
  height: number;
}

const OSD_FONT_FAMILY = 'DejaVu Sans, WenQuanYi Micro Hei, sans-serif';

/**
 * The drawings of the analysis results, or null when there is nothing to draw so that the renderer
 * can skip the work. Zones go under boxes, labels over everything.
 */
export function buildOverlay(input: OverlayInput): Overlay | null {
  const { width, height, osd } = input;
  const zones = osd.display_polygon
    ? input.zones.flatMap((zone) => zoneDrawings(zone, osd, width, height))
    : [];
  const boxes: Drawing[] = [];
  const labels: Drawing[] = [];
  for (const layout of objectLayouts(input.objects, osd, width, height)) {
    if (layout.box) boxes.push(boxDrawing(layout.box, layout.border, layout.dashed, layout.color.hex));
    if (layout.label) labels.push(labelDrawing(layout.label));
  }
  const drawings = [...zones, ...boxes, ...labels].filter((drawing) => drawing !== null);
  if (drawings.length === 0) return null;
  // One pixel more on each side for anti-aliased edges.
  const left = Math.max(0, Math.min(...drawings.map((drawing) => drawing.extent.x1)) - 1);
  const top = Math.max(0, Math.min(...drawings.map((drawing) => drawing.extent.y1)) - 1);
  const right = Math.min(width, Math.max(...drawings.map((drawing) => drawing.extent.x2)) + 1);
  const bottom = Math.min(height, Math.max(...drawings.map((drawing) => drawing.extent.y2)) + 1);
  if (right <= left || bottom <= top) return null;
  const size = { width: right - left, height: bottom - top };
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size.width}" height="${size.height}" ` +
    `viewBox="${left} ${top} ${size.width} ${size.height}">` +
    `${textStyle(drawings.map((drawing) => drawing.markup).join(''))}</svg>`;
  return { svg, left, top, ...size };
}

/** The font every OSD text is set in; the same for a whole overlay and for one tag drawn alone. */
const textStyle = (markup: string) => `<g font-family="${OSD_FONT_FAMILY}" font-weight="bold">${markup}</g>`;

/** Where one object's box and tag go, in frame pixels. */
export interface ObjectLayout {
  /** Null when boxes are not displayed. */
  box: PixelBox | null;
  /** Border width in whole pixels, drawn inside the box. */
  border: number;
  /** The border in dashes (a removed object's area), else whole. */
  dashed: boolean;
  color: Rgb;
  label: LabelLayout | null;
}

/** A filled tag with one line of text: its place in the frame and how it looks. */
export interface LabelLayout {
  x: number;
  y: number;
  width: number;
  height: number;
  text: string;
  fontSize: number;
  /** The tag's fill; the text is black or white, whichever reads better on it. */
  color: Rgb;
}

/** The object's box and tag as the OSD settings say, or null when it lies outside the frame. */
export function objectLayout(
  object: OverlayObject,
  osd: Required<Osd>,
  width: number,
  height: number,
): ObjectLayout | null {
  const box = clampBox(object, width, height);
  if (!box) return null;
  const color = hexColor(object.color);
  const text = labelText(object, osd);
  return {
    box: osd.display_box ? box : null,
    border: Math.round(osd.border_size),
    dashed: object.kind === 'removed',
    color,
    label: text ? labelLayout(box, text, color, osd.font_size, width, height) : null,
  };
}

/** The layouts of a frame's objects (those inside it), their tags kept off each other. */
export function objectLayouts(
  objects: readonly OverlayObject[],
  osd: Required<Osd>,
  width: number,
  height: number,
): ObjectLayout[] {
  const placed = objects.flatMap((object) => {
    const layout = objectLayout(object, osd, width, height);
    const box = clampBox(object, width, height);
    return layout && box ? [{ layout, box, label: layout.label }] : [];
  });
  const labels = placeLabels(placed, width, height);
  return placed.map(({ layout }, i) => ({ ...layout, label: labels[i] ?? null }));
}

/** One label alone as an SVG of its own size, drawn exactly as buildOverlay draws it at (x, y). */
export function labelSvg(label: LabelLayout): string {
  const { width, height } = label;
  const markup = labelDrawing({ ...label, x: 0, y: 0 }).markup;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}">${textStyle(markup)}</svg>`
  );
}

/** An SVG element and the pixels it may cover, in frame coordinates. */
interface Drawing {
  markup: string;
  extent: PixelBox;
}

/** Clamped to the frame so a box running off the edge keeps a visible border; null when outside. */
function clampBox(object: OverlayObject, width: number, height: number): PixelBox | null {
  const x1 = Math.max(0, Math.round(object.x1));
  const y1 = Math.max(0, Math.round(object.y1));
  const x2 = Math.min(width, Math.round(object.x2));
  const y2 = Math.min(height, Math.round(object.y2));
  return x2 > x1 && y2 > y1 ? { x1, y1, x2, y2 } : null;
}

/**
 * The border as a filled ring inside the box: integer edges stay crisp, unlike a centred stroke. A
 * dashed one is its dashes, whole-pixel rectangles that paint.ts fills alike.
 */
function boxDrawing(box: PixelBox, inset: number, dashed: boolean, color: string): Drawing {
  if (dashed) {
    const d = dashRects(box, inset)
      .map(({ x1, y1, x2, y2 }) => `M${x1} ${y1}H${x2}V${y2}H${x1}Z`)
      .join('');
    return { markup: `<path d="${d}" fill="${color}"/>`, extent: box };
  }
  const { x1, y1, x2, y2 } = box;
  const outer = `M${x1} ${y1}H${x2}V${y2}H${x1}Z`;
  const hasHole = x2 - x1 > 2 * inset && y2 - y1 > 2 * inset;
  const inner = hasHole ? `M${x1 + inset} ${y1 + inset}V${y2 - inset}H${x2 - inset}V${y1 + inset}Z` : '';
  return { markup: `<path d="${outer}${inner}" fill="${color}" fill-rule="evenodd"/>`, extent: box };
}

/**
 * A dashed border's dashes: 4 border widths long, 3 apart, along each side inside the box, the top and
 * bottom sides full width and the left and right ones between them; a box with no room for a hole is
 * filled whole, as a solid one is.
 */
export function dashRects(box: PixelBox, inset: number): PixelBox[] {
  const { x1, y1, x2, y2 } = box;
  if (x2 - x1 <= 2 * inset || y2 - y1 <= 2 * inset) return [box];
  const dash = 4 * Math.max(1, inset);
  const step = dash + 3 * Math.max(1, inset);
  const rects: PixelBox[] = [];
  for (let x = x1; x < x2; x += step) {
    const end = Math.min(x + dash, x2);
    rects.push({ x1: x, y1, x2: end, y2: y1 + inset }, { x1: x, y1: y2 - inset, x2: end, y2 });
  }
  for (let y = y1 + inset; y < y2 - inset; y += step) {
    const end = Math.min(y + dash, y2 - inset);
    rects.push({ x1, y1: y, x2: x1 + inset, y2: end }, { x1: x2 - inset, y1: y, x2, y2: end });
  }
  return rects;
}

/** A zone's outline, and a named zone's tag with its name at the top left. */
function zoneDrawings(zone: OverlayZone, osd: Required<Osd>, width: number, height: number): Drawing[] {
  const outline = zoneDrawing(zone, osd.border_size);
  if (!outline) return [];
  const arrow = zone.points.length === 2 ? lineArrow(zone, osd) : null;
  if (arrow) return [outline, arrow];
  if (zone.kind !== 'zone' || !zone.name) return [outline];
  const text = xmlSafe(zone.name).trim();
  const tag = labelLayout(outline.extent, text, hexColor(zone.color), osd.font_size, width, height);
  return [outline, labelDrawing(tag)];
}

/**
 * A counting line's arrow: across the line at its middle, pointing to the side a counted crossing
 * goes to ('in': side B, right of the line from its first point to its second; 'out': side A), with
 * a head at both ends for 'both'. Its length follows the font size, so it reads at any frame size.
 */
function lineArrow(zone: OverlayZone, osd: Required<Osd>): Drawing | null {
  const [[ax = 0, ay = 0] = [], [bx = 0, by = 0] = []] = zone.points;
  const length = Math.hypot(bx - ax, by - ay);
  if (length === 0) return null;
  // The unit normal towards side B, where the cross product (B - A) x (P - A) is positive.
  const nx = -(by - ay) / length;
  const ny = (bx - ax) / length;
  const reach = Math.max(12, Math.round(osd.font_size * 1.5));
  const head = Math.max(6, Math.round(reach / 2.5));
  const mx = (ax + bx) / 2;
  const my = (ay + by) / 2;
  const direction = zone.direction ?? 'both';
  const sign = direction === 'out' ? -1 : 1;
  const tip = { x: mx + sign * nx * reach, y: my + sign * ny * reach };
  const tail = direction === 'both' ? { x: mx - nx * reach, y: my - ny * reach } : { x: mx, y: my };
  const headAt = (x: number, y: number, ux: number, uy: number) => {
    // A triangle whose point is (x, y), pointing along (ux, uy).
    const bx0 = x - ux * head;
    const by0 = y - uy * head;
    const corners = [
      [x, y],
      [bx0 - uy * head * 0.6, by0 + ux * head * 0.6],
      [bx0 + uy * head * 0.6, by0 - ux * head * 0.6],
    ];
    return `<polygon points="${corners.map(([px = 0, py = 0]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' ')}"/>`;
  };
  const color = hexColor(zone.color).hex;
  const heads = [headAt(tip.x, tip.y, sign * nx, sign * ny)];
  if (direction === 'both') heads.push(headAt(tail.x, tail.y, -nx, -ny));
  const markup =
    `<g fill="${color}" stroke="${color}" stroke-width="${Math.round(osd.border_size)}">` +
    `<line x1="${tail.x.toFixed(1)}" y1="${tail.y.toFixed(1)}" x2="${tip.x.toFixed(1)}" y2="${tip.y.toFixed(1)}"/>` +
    `${heads.join('')}</g>`;
  const pad = head + Math.round(osd.border_size);
  const extent = {
    x1: Math.floor(Math.min(tip.x, tail.x) - pad),
    y1: Math.floor(Math.min(tip.y, tail.y) - pad),
    x2: Math.ceil(Math.max(tip.x, tail.x) + pad),
    y2: Math.ceil(Math.max(tip.y, tail.y) + pad),
  };
  return { markup, extent };
}

/** Masks are shaded grey whatever the app's colour: they are where the app does not look. */
const MASK_COLOR = '#000000';
const MASK_FILL_OPACITY = 0.45;
const MASK_STROKE = '#9e9e9e';

function zoneDrawing(zone: OverlayZone, borderSize: number): Drawing | null {
  const color = zone.kind === 'mask' ? MASK_STROKE : hexColor(zone.color).hex;
  const strokeWidth = Math.round(borderSize);
  const dashes =
    zone.kind === 'zone' || zone.kind === 'mask'
      ? ` stroke-dasharray="${strokeWidth * 4} ${strokeWidth * 3}"`
      : '';
  const stroke = `stroke="${color}" stroke-width="${strokeWidth}"${dashes}`;
  const points = zone.points.map(([x = 0, y = 0]) => [Math.round(x), Math.round(y)] as const);
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  // Round joins and caps reach half the stroke beyond the points.
  const reach = Math.ceil(strokeWidth / 2);
  const extent = {
    x1: Math.min(...xs) - reach,
    y1: Math.min(...ys) - reach,
    x2: Math.max(...xs) + reach,
    y2: Math.max(...ys) + reach,
  };
  const [a, b] = points;
  if (points.length === 2 && a && b) {
    return {
      markup: `<line x1="${a[0]}" y1="${a[1]}" x2="${b[0]}" y2="${b[1]}" ${stroke} stroke-linecap="round"/>`,
      extent,
    };
  }
  if (points.length < 3) return null;
  const fill =
    zone.kind === 'mask' ? `fill="${MASK_COLOR}" fill-opacity="${MASK_FILL_OPACITY}"` : 'fill="none"';
  const list = points.map(([x, y]) => `${x},${y}`).join(' ');
  return { markup: `<polygon points="${list}" ${fill} ${stroke} stroke-linejoin="round"/>`, extent };
}

/** What a removed object's area is tagged with, in place of its name. */
export const REMOVED_TAG = 'removed';

/**
 * Name, track id and speed (one decimal, so a tag repeats from frame to frame and its tile is reused);
 * the speed only with a name or track id: it describes the object the tag names.
 */
function labelText(object: OverlayObject, osd: Required<Osd>): string {
  if (object.kind === 'removed') return osd.display_name ? REMOVED_TAG : '';
  const name = osd.display_name ? xmlSafe(object.name).trim() : '';
  const trackId = osd.display_track ? xmlSafe(object.trackId).trim() : '';
  const speed = (name || trackId) && object.speed !== undefined ? `${object.speed.toFixed(1)} m/s` : '';
  return [name, trackId && `#${trackId}`, speed].filter(Boolean).join(' ');
}

/** A filled tag on the box's top edge, moved inside the box when it would leave the frame. */
function labelLayout(
  box: PixelBox,
  text: string,
  color: Rgb,
  fontSize: number,
  frameWidth: number,
  frameHeight: number,
): LabelLayout {
  const padding = labelPadding(fontSize);
  const height = Math.round(fontSize * 1.35);
  const width = Math.ceil(textWidth(text, fontSize)) + 2 * padding;
  const x = Math.max(0, Math.min(box.x1, frameWidth - width));
  const above = box.y1 - height;
  const y = above >= 0 ? above : Math.max(0, Math.min(box.y1, frameHeight - height));
  return { x, y, width, height, text, fontSize, color };
}

const labelPadding = (fontSize: number) => Math.round(fontSize * 0.3);

function labelDrawing(label: LabelLayout): Drawing {
  const { x, y, width, height, fontSize } = label;
  // Centres the capitals; descenders still fit within the 1.35 em tag.
  const baseline = y + Math.round((height + CAP_HEIGHT_EM * fontSize) / 2);
  const markup =
    `<rect x="${x}" y="${y}" width="${width}" height="${height}" fill="${label.color.hex}"/>` +
    `<text x="${x + labelPadding(fontSize)}" y="${baseline}" font-size="${fontSize}" fill="${readableTextColor(label.color)}">` +
    `${escapeXml(label.text)}</text>`;
  return { markup, extent: { x1: x, y1: y, x2: x + width, y2: y + height } };
}

export interface Rgb {
  /** '#rrggbb' */
  hex: string;
  r: number;
  g: number;
  b: number;
}

/** Colours are validated as #rrggbb upstream; anything else here is a bug, and must not reach the SVG. */
function hexColor(color: string): Rgb {
  if (!/^#[0-9a-f]{6}$/i.test(color))
    throw new TypeError(`OSD colour must be #rrggbb, got ${JSON.stringify(color)}`);
  const value = Number.parseInt(color.slice(1), 16);
  return { hex: color.toLowerCase(), r: value >> 16, g: (value >> 8) & 0xff, b: value & 0xff };
}

/** Black or white, whichever contrasts more with the background (WCAG relative luminance). */
function readableTextColor({ r, g, b }: Rgb): string {
  const linear = (channel: number) => {
    const c = channel / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? '#000000' : '#ffffff';
}

/**
 * Drops what XML 1.0 cannot carry (C0 controls, U+FFFE/U+FFFF) and the invisible C1 controls, so an
 * operator's class name cannot make the SVG parser reject the document. Lone surrogates need nothing:
 * UTF-8 encoding turns them into U+FFFD.
 */
function xmlSafe(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f\ufffe\uffff]/g, '');
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => XML_ENTITIES[char] ?? char);
}

const XML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

/** DejaVu Sans Bold cap height, in em. */
const CAP_HEIGHT_EM = 0.73;

/** DejaVu Sans Bold advance widths of U+0020..U+007E in 1/1000 em, read from the font's hmtx table. */
const ASCII_ADVANCES = [
  348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365, 696, 696, 696, 696, 696,
  696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 580, 1000, 774, 762, 734, 830, 683, 683, 821, 837, 372,
  372, 775, 637, 995, 837, 850, 733, 850, 770, 720, 682, 812, 774, 1103, 771, 724, 725, 457, 365, 457, 838,
  500, 500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665, 343, 1042, 712, 687, 716, 716, 493, 595,
  478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838,
];
/** Other scripts: generous, so that a tag is a little wide rather than the text overflowing it. */
const OTHER_ADVANCE = 800;
const WIDE_ADVANCE = 1000;

/**
 * The label's width, estimated from the font's metrics since librsvg cannot size a box to its text;
 * CJK (set in WenQuanYi Micro Hei) is one em per character.
 */
function textWidth(text: string, fontSize: number): number {
  let advance = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    advance += ASCII_ADVANCES[code - 0x20] ?? (isWide(code) ? WIDE_ADVANCE : OTHER_ADVANCE);
  }
  return (advance / 1000) * fontSize;
}

/** East Asian wide and full-width ranges (Hangul, CJK, kana, full-width forms, supplementary ideographs). */
function isWide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    code >= 0x20000
  );
}
