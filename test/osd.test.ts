// Over 400 lines on purpose: each overlay element is checked pixel by pixel on rendered frames.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import {
  areaZones,
  buildOverlay,
  type OverlayInput,
  type OverlayObject,
  type OverlayZone,
  objectLayouts,
} from '../engine/osd/overlay';
import { paintObjects } from '../engine/osd/paint';
import { renderOverlay, renderSnapshot } from '../engine/osd/render';
import { appSnapshot, toOverlayObject } from '../engine/osd/snapshot';
import { REMOVED_COLOR } from '../engine/rules/removed-object';
import type { ShownObject } from '../engine/rules/rule-kind';
import { DEFAULT_OSD, type Osd } from '../engine/tasks/schema';
import type { Frame } from '../engine/vision/types';
import { FIXTURES } from './helpers/fixtures';

type Rgb = readonly [number, number, number];
const GREY: Rgb = [128, 128, 128];
const RED: Rgb = [255, 0, 0];
const BLUE: Rgb = [0, 0, 255];
const NO_LABELS: Required<Osd> = { ...DEFAULT_OSD, display_name: false, display_track: false };
const OUTPUT = resolve(import.meta.dirname, '../test-output');

function greyFrame(width = 200, height = 150): Frame {
  return { data: new Uint8Array(width * height * 3).fill(GREY[0]), width, height };
}

function redBox(overrides: Partial<OverlayObject> = {}): OverlayObject {
  return { x1: 40, y1: 50, x2: 120, y2: 110, color: '#ff0000', name: 'person', trackId: '7', ...overrides };
}

/** Renders the overlay onto the frame and returns the raw RGB result. */
async function draw(frame: Frame, input: Partial<Omit<OverlayInput, 'width' | 'height'>>): Promise<Buffer> {
  const overlay = buildOverlay({
    width: frame.width,
    height: frame.height,
    osd: DEFAULT_OSD,
    zones: [],
    objects: [],
    ...input,
  });
  return renderOverlay(frame, overlay);
}

function pixel(image: Uint8Array, width: number, x: number, y: number): Rgb {
  const i = (y * width + x) * 3;
  return [image[i] as number, image[i + 1] as number, image[i + 2] as number];
}

function isColor(actual: Rgb, expected: Rgb, tolerance = 0): boolean {
  return actual.every((channel, i) => Math.abs(channel - (expected[i] as number)) <= tolerance);
}

/** Pixels of a rectangle [x1, x2) x [y1, y2) that satisfy the test. */
function countPixels(
  image: Uint8Array,
  width: number,
  area: { x1: number; y1: number; x2: number; y2: number },
  test: (rgb: Rgb) => boolean,
): number {
  let count = 0;
  for (let y = area.y1; y < area.y2; y++) {
    for (let x = area.x1; x < area.x2; x++) if (test(pixel(image, width, x, y))) count++;
  }
  return count;
}

const whole = (frame: Frame) => ({ x1: 0, y1: 0, x2: frame.width, y2: frame.height });

function firstVideoFrame(): Frame {
  const data = execFileSync(
    '/usr/bin/ffmpeg',
    [
      '-v',
      'error',
      '-i',
      join(FIXTURES, 'media', 'vtest.avi'),
      '-frames:v',
      '1',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-',
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return { data: new Uint8Array(data), width: 768, height: 576 };
}

describe('boxes', () => {
  it('draws the border in the object colour and leaves the inside and outside untouched', async () => {
    const frame = greyFrame();
    const image = await draw(frame, { osd: { ...NO_LABELS, border_size: 2 }, objects: [redBox()] });
    for (let y = 50; y < 110; y++) {
      for (const x of [40, 41, 118, 119]) expect(pixel(image, frame.width, x, y)).toEqual(RED);
    }
    for (let x = 40; x < 120; x++) {
      for (const y of [50, 51, 108, 109]) expect(pixel(image, frame.width, x, y)).toEqual(RED);
    }
    const inside = { x1: 43, y1: 53, x2: 117, y2: 107 };
    expect(countPixels(image, frame.width, inside, (rgb) => !isColor(rgb, GREY))).toBe(0);
    const redPixels = countPixels(image, frame.width, whole(frame), (rgb) => !isColor(rgb, GREY));
    // The ring is all there is: 80x60 minus the 76x56 hole.
    expect(redPixels).toBe(80 * 60 - 76 * 56);
  });

  it('makes the border as wide as border_size', async () => {
    const frame = greyFrame();
    const redOnMiddleRow = async (borderSize: number) => {
      const image = await draw(frame, {
        osd: { ...NO_LABELS, border_size: borderSize },
        objects: [redBox()],
      });
      return countPixels(image, frame.width, { x1: 0, y1: 80, x2: frame.width, y2: 81 }, (rgb) =>
        isColor(rgb, RED),
      );
    };
    expect(await redOnMiddleRow(2)).toBe(4);
    expect(await redOnMiddleRow(6)).toBe(12);
  });

  it('keeps a box running off the frame visible along the frame edge', async () => {
    const frame = greyFrame();
    const image = await draw(frame, { osd: NO_LABELS, objects: [redBox({ x1: -30, x2: 60 })] });
    expect(pixel(image, frame.width, 0, 80)).toEqual(RED);
    expect(pixel(image, frame.width, 1, 80)).toEqual(RED);
    expect(pixel(image, frame.width, 2, 80)).toEqual(GREY);
  });

  it('draws no box pixels with display_box off', async () => {
    const frame = greyFrame();
    const osd = { ...NO_LABELS, display_box: false };
    expect(buildOverlay({ width: 200, height: 150, osd, zones: [], objects: [redBox()] })).toBeNull();
    const image = await draw(frame, { osd, objects: [redBox()] });
    expect(countPixels(image, frame.width, whole(frame), (rgb) => !isColor(rgb, GREY))).toBe(0);
  });

  it('draws a removed object\'s area dashed in its own colour, tagged "removed" (issue 18)', async () => {
    const area: ShownObject = {
      track_id: '',
      x: 80,
      y: 80,
      w: 80,
      h: 60,
      score: 0.6,
      class_id: 'removed',
      name: 'shelf',
      area: 4800,
      zones: ['shelf'],
      removed: 3,
      color: REMOVED_COLOR,
    };
    const removed = toOverlayObject(area);
    expect(removed).toEqual({
      ...redBox({ color: REMOVED_COLOR, name: 'shelf', trackId: '' }),
      kind: 'removed',
    });
    const [layout] = objectLayouts([removed], DEFAULT_OSD, 200, 150);
    expect([layout?.dashed, layout?.label?.text]).toEqual([true, 'removed']);
    expect(objectLayouts([removed], { ...DEFAULT_OSD, display_name: false }, 200, 150)[0]?.label).toBeNull();

    // The top and bottom edges, border 2: dashes of 8 pixels, 6 apart, from the box's left edge;
    // below the top edge, the first dash of each side.
    const frame = greyFrame();
    const image = await draw(frame, { osd: { ...NO_LABELS, border_size: 2 }, objects: [removed] });
    const MAGENTA: Rgb = [255, 0, 255];
    const row = (y: number) =>
      Array.from({ length: 80 }, (_, i) =>
        isColor(pixel(image, frame.width, 40 + i, y), MAGENTA) ? 'x' : '.',
      ).join('');
    const dashes = 'xxxxxxxx......'.repeat(6).slice(0, 80);
    expect([row(50), row(51), row(52), row(109)]).toEqual([dashes, dashes, `xx${'.'.repeat(76)}xx`, dashes]);
    // Painted into a frame (snapshots) exactly as the SVG (AI video) draws it, tag included.
    const painted = Buffer.from(frame.data);
    await paintObjects(painted, 200, 150, [removed], DEFAULT_OSD);
    const expected = await draw(frame, { osd: DEFAULT_OSD, objects: [removed] });
    expect(painted.equals(expected)).toBe(true);
  });

  it('limits the overlay to the region with drawings', () => {
    const overlay = buildOverlay({ width: 200, height: 150, osd: NO_LABELS, zones: [], objects: [redBox()] });
    expect(overlay).toMatchObject({ left: 39, top: 49, width: 82, height: 62 });
  });
});

describe('labels', () => {
  const labelRows = { x1: 40, y1: 0, x2: 200, y2: 50 };

  it('draws no label with display_name and display_track off', async () => {
    const frame = greyFrame();
    const image = await draw(frame, { osd: NO_LABELS, objects: [redBox()] });
    expect(countPixels(image, frame.width, labelRows, (rgb) => !isColor(rgb, GREY))).toBe(0);
  });

  it('draws a tag above the box for the name or the track id alone', async () => {
    const frame = greyFrame();
    for (const osd of [
      { ...NO_LABELS, display_name: true },
      { ...NO_LABELS, display_track: true },
    ]) {
      const image = await draw(frame, { osd, objects: [redBox()] });
      // font_size 16: a 22 px tag right on top of the box, starting at its left edge.
      expect(pixel(image, frame.width, 41, 49)).toEqual(RED);
      expect(pixel(image, frame.width, 41, 28)).toEqual(RED);
      expect(pixel(image, frame.width, 41, 27)).toEqual(GREY);
      expect(pixel(image, frame.width, 39, 40)).toEqual(GREY);
    }
  });

  it('writes the text in a colour readable on the tag', async () => {
    const frame = greyFrame();
    const textPixels = async (color: string, text: Rgb) => {
      const image = await draw(frame, { objects: [redBox({ color })] });
      return countPixels(image, frame.width, { x1: 40, y1: 28, x2: 200, y2: 50 }, (rgb) =>
        isColor(rgb, text, 20),
      );
    };
    expect(await textPixels('#ffff00', [0, 0, 0])).toBeGreaterThan(50);
    expect(await textPixels('#ffff00', [255, 255, 255])).toBe(0);
    expect(await textPixels('#1a237e', [255, 255, 255])).toBeGreaterThan(50);
    expect(await textPixels('#1a237e', [0, 0, 0])).toBe(0);
  });

  it('sizes the tag to its text', async () => {
    const frame = greyFrame(400, 150);
    const tagWidth = async (name: string) => {
      const image = await draw(frame, {
        osd: { ...DEFAULT_OSD, display_track: false },
        objects: [redBox({ name })],
      });
      return countPixels(image, frame.width, { x1: 0, y1: 29, x2: 400, y2: 30 }, (rgb) => isColor(rgb, RED));
    };
    const short = await tagWidth('cat');
    const long = await tagWidth('cat cat cat cat');
    // 'cat' is about 30 px in 16 px DejaVu Sans Bold, plus the padding.
    expect(short).toBeGreaterThan(30);
    expect(short).toBeLessThan(50);
    expect(long).toBeGreaterThan(3.5 * short - 30);
  });

  it('puts the tag inside the box when the box touches the top of the frame', async () => {
    const frame = greyFrame();
    const image = await draw(frame, { objects: [redBox({ y1: 10 })] });
    // The 22 px tag covers rows 10-31 of the box; x 42 is in its padding, inside the box's border.
    expect(pixel(image, frame.width, 42, 31)).toEqual(RED);
    expect(pixel(image, frame.width, 42, 32)).toEqual(GREY);
    expect(pixel(image, frame.width, 42, 9)).toEqual(GREY);
  });

  it('writes the speed of a calibrated object after its name and track id, to one decimal', () => {
    const texts = (osd: Required<Osd>) =>
      objectLayouts(
        [
          redBox({ speed: 1.456 }),
          redBox({ x1: 130, x2: 190, trackId: '8' }),
          redBox({ trackId: '9', speed: 0 }),
        ],
        osd,
        640,
        480,
      ).map((layout) => layout.label?.text ?? null);
    expect(texts(DEFAULT_OSD)).toEqual(['person #7 1.5 m/s', 'person #8', 'person #9 0.0 m/s']);
    expect(texts({ ...NO_LABELS, display_name: true })).toEqual([
      'person 1.5 m/s',
      'person',
      'person 0.0 m/s',
    ]);
    expect(texts({ ...NO_LABELS, display_track: true })).toEqual(['#7 1.5 m/s', '#8', '#9 0.0 m/s']);
    expect(texts(NO_LABELS)).toEqual([null, null, null]);
  });

  it('carries a reported speed onto the box the snapshots and the AI video draw, and draws it in the tag', async () => {
    const shown: ShownObject = {
      track_id: '7',
      x: 80,
      y: 80,
      w: 80,
      h: 60,
      score: 0.9,
      class_id: '0',
      name: 'person',
      color: '#ff0000',
      speed: 1.46,
      heading: 90,
    };
    expect(toOverlayObject(shown)).toEqual(redBox({ speed: 1.46 }));
    expect(toOverlayObject({ ...shown, speed: undefined })).toEqual(redBox());
    // The tag with the speed reaches further right than the one without: its text is drawn.
    const frame = greyFrame(300, 150);
    const tagEnd = (speed?: number) => {
      const [layout] = objectLayouts([redBox({ speed })], DEFAULT_OSD, 300, 150);
      return (layout?.label?.x ?? 0) + (layout?.label?.width ?? 0);
    };
    const [plain, withSpeed] = [tagEnd(), tagEnd(1.46)];
    expect(withSpeed).toBeGreaterThan(plain + 30);
    const painted = Buffer.from(frame.data);
    await paintObjects(painted, 300, 150, [redBox({ speed: 1.46 })], DEFAULT_OSD);
    expect(pixel(painted, 300, withSpeed - 1, 30)).toEqual(RED);
    expect(pixel(painted, 300, withSpeed, 30)).toEqual(GREY);
  });

  it('keeps the tag inside the frame at the right edge', async () => {
    const frame = greyFrame();
    const image = await draw(frame, { objects: [redBox({ x1: 180, x2: 200, name: 'a long class name' })] });
    expect(pixel(image, frame.width, 199, 30)).toEqual(RED);
    expect(pixel(image, frame.width, 100, 30)).toEqual(RED);
  });

  it('keeps the tags of neighbouring objects off each other (defect 10 of issue 16)', () => {
    // Two people side by side: their tags, 22 px high, would both sit at y 28 on overlapping x.
    const objects = [redBox({ x1: 40, x2: 90, trackId: '1' }), redBox({ x1: 60, x2: 110, trackId: '2' })];
    const layouts = objectLayouts(objects, DEFAULT_OSD, 200, 150);
    const tags = layouts.map((layout) => layout.label && [layout.label.x, layout.label.y]);
    // The first keeps its place on the box's top edge; the second goes inside its own box's top.
    expect(tags).toEqual([
      [40, 28],
      [60, 50],
    ]);
  });

  it('leaves no two tags overlapping in a crowd while there is room', () => {
    const crowd = Array.from({ length: 12 }, (_, i) =>
      redBox({ x1: 20 + i * 12, x2: 80 + i * 12, y1: 200 + (i % 3) * 6, y2: 320, trackId: String(i) }),
    );
    const labels = objectLayouts(crowd, DEFAULT_OSD, 640, 480).map((layout) => layout.label);
    const clash = labels.flatMap((a, i) =>
      labels
        .slice(i + 1)
        .filter(
          (b) =>
            a &&
            b &&
            a.x < b.x + b.width &&
            b.x < a.x + a.width &&
            a.y < b.y + b.height &&
            b.y < a.y + a.height,
        ),
    );
    expect(clash).toEqual([]);
    for (const label of labels) expect(label && label.y >= 0 && label.y + label.height <= 480).toBe(true);
  });

  it('renders hostile names and track ids as text, never as markup', async () => {
    // Wide enough that the tag, name and id both hostile, does not shift left over x 41.
    const frame = greyFrame(1000, 150);
    for (const name of [
      '</text><script>alert(1)</script>',
      '&amp;',
      '"',
      "'",
      '\u0000',
      'a\u0007b\u001b\ud800c',
      '\uffff',
    ]) {
      const overlay = buildOverlay({
        width: frame.width,
        height: frame.height,
        osd: DEFAULT_OSD,
        zones: [],
        objects: [redBox({ name, trackId: `${name}1` })],
      });
      expect(overlay?.svg).not.toContain('<script');
      // biome-ignore lint/suspicious/noControlCharactersInRegex: checking that none reach the SVG
      expect(overlay?.svg).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
      // sharp (librsvg) rejects a document that does not parse.
      const image = await renderOverlay(frame, overlay);
      expect(pixel(image, frame.width, 41, 40)).toEqual(RED);
    }
    expect(buildOverlay({ ...emptyInput(), objects: [redBox({ name: '&amp;' })] })?.svg).toContain(
      '&amp;amp;',
    );
  });

  it('refuses a colour that is not #rrggbb instead of writing it into the SVG', () => {
    const objects = [redBox({ color: 'red"/><script>' })];
    expect(() => buildOverlay({ ...emptyInput(), objects })).toThrow(TypeError);
  });

  it('renders Chinese class names with real glyphs, not missing-glyph boxes', async () => {
    const inkShape = async (name: string) => {
      const frame = greyFrame(300, 200);
      const osd = { ...DEFAULT_OSD, display_track: false, font_size: 64 };
      const image = await draw(frame, { osd, objects: [redBox({ y1: 120, y2: 190, name })] });
      return blackInk(image, frame.width, { x1: 40, y1: 34, x2: 300, y2: 120 });
    };
    const person = await inkShape('人');
    const missing = await inkShape('\u{10fffd}');
    // A missing glyph is drawn as a framed box: ink all along its top row. 人 has only its tip there.
    expect(missing.topRowCoverage).toBeGreaterThan(0.8);
    expect(person.inkPixels).toBeGreaterThan(200);
    expect(person.topRowCoverage).toBeLessThan(0.3);
    // The glyph fills most of an em (64 px), a glyph for the wrong script would not.
    expect(person.width).toBeGreaterThan(45);
    expect(person.height).toBeGreaterThan(45);
  });
});

function emptyInput(): OverlayInput {
  return { width: 200, height: 150, osd: DEFAULT_OSD, zones: [], objects: [] };
}

/** Where the black text is inside an area, and how much of its top row is ink. */
function blackInk(
  image: Uint8Array,
  width: number,
  area: { x1: number; y1: number; x2: number; y2: number },
) {
  const ink = (x: number, y: number) => Math.max(...pixel(image, width, x, y)) < 80;
  let [left, top, right, bottom, inkPixels] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, -1, -1, 0];
  for (let y = area.y1; y < area.y2; y++) {
    for (let x = area.x1; x < area.x2; x++) {
      if (!ink(x, y)) continue;
      inkPixels++;
      [left, top, right, bottom] = [
        Math.min(left, x),
        Math.min(top, y),
        Math.max(right, x),
        Math.max(bottom, y),
      ];
    }
  }
  let topRowInk = 0;
  for (let x = left; x <= right; x++) if (ink(x, top) || ink(x, top + 1)) topRowInk++;
  return {
    inkPixels,
    width: right - left + 1,
    height: bottom - top + 1,
    topRowCoverage: topRowInk / (right - left + 1),
  };
}

describe('zones', () => {
  const triangle: OverlayZone = {
    points: [
      [20, 20],
      [180, 20],
      [100, 140],
    ],
    color: '#0000ff',
  };
  const bluish = (rgb: Rgb) => rgb[2] > rgb[0] + 40;

  it('draws a region with display_polygon and nothing without', async () => {
    const frame = greyFrame();
    const shown = await draw(frame, { zones: [triangle] });
    expect(pixel(shown, frame.width, 100, 20)).toEqual(BLUE);
    // The slanted sides are anti-aliased.
    expect(bluish(pixel(shown, frame.width, 60, 80))).toBe(true);
    expect(bluish(pixel(shown, frame.width, 140, 80))).toBe(true);
    expect(pixel(shown, frame.width, 100, 60)).toEqual(GREY);
    const hidden = await draw(frame, { osd: { ...DEFAULT_OSD, display_polygon: false }, zones: [triangle] });
    expect(countPixels(hidden, frame.width, whole(frame), bluish)).toBe(0);
  });

  it('draws a counting line and nothing for a whole-frame zone', async () => {
    const frame = greyFrame();
    const line = await draw(frame, {
      zones: [
        {
          points: [
            [10, 75],
            [190, 75],
          ],
          color: '#0000ff',
        },
      ],
    });
    expect(pixel(line, frame.width, 100, 75)).toEqual(BLUE);
    expect(countPixels(line, frame.width, whole(frame), bluish)).toBeLessThan(190 * 4);
    expect(buildOverlay({ ...emptyInput(), zones: [{ points: [], color: '#0000ff' }] })).toBeNull();
  });

  it("draws a counting line's direction as an arrow across its middle: 'in' to side B, 'out' to A, both (issue 34)", async () => {
    const frame = greyFrame();
    // From A (10, 75) to B (190, 75): side B, right of A->B on the frame, is below it.
    const points: [number, number][] = [
      [10, 75],
      [190, 75],
    ];
    const arrowSides = async (direction?: 'in' | 'out' | 'both') => {
      const image = await draw(frame, {
        zones: [{ points, color: '#0000ff', ...(direction && { direction }) }],
      });
      const onShaft = (y: number) => bluish(pixel(image, frame.width, 100, y));
      return { below: onShaft(88), above: onShaft(62), beside: bluish(pixel(image, frame.width, 60, 88)) };
    };
    expect(await arrowSides('in')).toEqual({ below: true, above: false, beside: false });
    expect(await arrowSides('out')).toEqual({ below: false, above: true, beside: false });
    expect(await arrowSides('both')).toEqual({ below: true, above: true, beside: false });
    expect(await arrowSides()).toEqual({ below: true, above: true, beside: false });
  });

  it('draws a region as its outline only, whatever is inside it (issue 34: a tint reads like an alarm)', async () => {
    const frame = greyFrame();
    // How the pipeline marked a region holding an object until issue 34, which drew it tinted.
    const holding = { ...triangle, occupied: true } as OverlayZone;
    const shown = await draw(frame, { zones: [holding] });
    expect(pixel(shown, frame.width, 100, 60)).toEqual(GREY);
    // Only the outline's pixels are touched: 2 px along the three sides' ~450 px, and their anti-aliasing.
    expect(countPixels(shown, frame.width, whole(frame), (rgb) => rgb[2] !== rgb[0])).toBeLessThan(450 * 4);
  });

  it("draws an app's named zones dashed with their name, and shades its masks (issue 18)", async () => {
    const frame = greyFrame();
    const [zone, mask] = areaZones(
      {
        polygon: [],
        zones: [{ name: 'gate', polygon: triangle.points }],
        masks: [
          [
            [150, 100],
            [195, 100],
            [195, 145],
            [150, 145],
          ],
        ],
      },
      '#0000ff',
    ) as [OverlayZone, OverlayZone];
    expect([zone.kind, zone.name, mask.kind]).toEqual(['zone', 'gate', 'mask']);
    const svg = buildOverlay({ ...emptyInput(), zones: [zone, mask] })?.svg ?? '';
    expect(svg).toContain('>gate</text>');
    expect(svg.match(/stroke-dasharray/g)).toHaveLength(2);
    const shown = await draw(frame, { zones: [zone, mask] });
    // The top edge is dashed: blue and grey alternate along it.
    const edge = Array.from({ length: 80 }, (_, i) => bluish(pixel(shown, frame.width, 60 + i, 20)));
    expect(edge.filter(Boolean).length).toBeGreaterThan(20);
    expect(edge.filter((blue) => !blue).length).toBeGreaterThan(10);
    // The mask's inside is darkened (45 % black over grey 128), its outside untouched.
    expect(isColor(pixel(shown, frame.width, 172, 122), [70, 70, 70], 2)).toBe(true);
    expect(pixel(shown, frame.width, 120, 122)).toEqual(GREY);
  });
});

describe('rendering', () => {
  it('returns the frame unchanged when there is nothing to draw, and never alters the frame', async () => {
    const frame = greyFrame();
    expect(Buffer.compare(await renderOverlay(frame, null), Buffer.from(frame.data))).toBe(0);
    await draw(frame, { objects: [redBox()] });
    expect(frame.data.every((value) => value === GREY[0])).toBe(true);
  });

  it('encodes a JPEG snapshot of the frame size, with and without drawings', async () => {
    const frame = greyFrame(320, 240);
    const overlay = buildOverlay({ ...emptyInput(), width: 320, height: 240, objects: [redBox()] });
    for (const jpeg of [await renderSnapshot(frame, overlay), await renderSnapshot(frame, null, 60)]) {
      expect(jpeg.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
      expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: 320, height: 240 });
    }
    const { data } = await sharp(await renderSnapshot(frame, overlay))
      .raw()
      .toBuffer({ resolveWithObject: true });
    // JPEG's halved colour resolution dulls a 2 px line.
    const [r, g, b] = pixel(data, 320, 41, 80);
    expect(r).toBeGreaterThan(180);
    expect(Math.max(g, b)).toBeLessThan(60);
    expect(isColor(pixel(data, 320, 80, 80), GREY, 8)).toBe(true);
  });
});

describe('a real frame', () => {
  const objects: OverlayObject[] = [
    { x1: 492, y1: 150, x2: 532, y2: 235, color: '#ff3b30', name: 'person', trackId: '12' },
    { x1: 250, y1: 218, x2: 285, y2: 310, color: '#34c759', name: '行人', trackId: '7' },
    { x1: 636, y1: 236, x2: 688, y2: 324, color: '#ffcc00', name: 'pedestrian', trackId: '105' },
    { x1: 650, y1: 40, x2: 725, y2: 100, color: '#0a84ff', name: 'van', trackId: '3' },
  ];
  const zones: OverlayZone[] = [
    {
      points: [
        [40, 300],
        [400, 260],
        [720, 420],
        [300, 560],
      ],
      color: '#00c7be',
    },
    {
      points: [
        [20, 200],
        [740, 200],
      ],
      color: '#ff9500',
    },
  ];

  it('renders an annotated snapshot of the first frame of vtest.avi', async () => {
    const frame = firstVideoFrame();
    const overlay = buildOverlay({ width: 768, height: 576, osd: DEFAULT_OSD, zones, objects });
    const jpeg = await renderSnapshot(frame, overlay);
    mkdirSync(OUTPUT, { recursive: true });
    writeFileSync(join(OUTPUT, 'osd-snapshot.jpg'), jpeg);
    const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([768, 576]);
    expect(isColor(pixel(data, 768, 492, 190), [255, 59, 48], 40)).toBe(true);
    expect(isColor(pixel(data, 768, 650, 70), [10, 132, 255], 40)).toBe(true);
  });

  it('paints objects straight into the frame exactly as their SVG rasterises, tags from kept tiles', async () => {
    const frame = firstVideoFrame();
    const edgeCases: OverlayObject[] = [
      ...objects,
      // Tag above the frame: moved inside the box. Box off the left edge: clamped.
      { x1: -20, y1: 3, x2: 60, y2: 90, color: '#af52de', name: 'cyclist', trackId: '44' },
      // Too small for a hole: filled whole. Tag wider than the room left on the right: moved left.
      { x1: 760, y1: 300, x2: 763, y2: 302, color: '#ffffff', name: 'bag', trackId: '9' },
      // Entirely outside: nothing.
      { x1: 900, y1: 10, x2: 950, y2: 60, color: '#ff0000', name: 'ghost', trackId: '1' },
    ];
    const settings: Array<Required<Osd>> = [
      DEFAULT_OSD,
      { ...DEFAULT_OSD, font_size: 24, border_size: 5 },
      { ...DEFAULT_OSD, display_box: false },
      { ...DEFAULT_OSD, display_track: false },
      NO_LABELS,
    ];
    for (const osd of settings) {
      const expected = await renderOverlay(
        frame,
        buildOverlay({ width: 768, height: 576, osd, zones: [], objects: edgeCases }),
      );
      // Twice: the second time every tag comes from a kept tile.
      for (let round = 0; round < 2; round++) {
        const painted = Buffer.from(frame.data);
        await paintObjects(painted, 768, 576, edgeCases, osd);
        expect(painted.equals(expected), JSON.stringify(osd)).toBe(true);
      }
    }
    expect(Buffer.from(frame.data).equals(Buffer.from(firstVideoFrame().data))).toBe(true);
  });

  it('draws an app snapshot as zone and objects layers, matching one drawing of both', async () => {
    const frame = firstVideoFrame();
    const zone = zones[0] as OverlayZone;
    const shown: ShownObject[] = objects.map((o, i) => ({
      track_id: o.trackId,
      x: (o.x1 + o.x2) / 2,
      y: (o.y1 + o.y2) / 2,
      w: o.x2 - o.x1,
      h: o.y2 - o.y1,
      name: o.name,
      color: o.color,
      class_id: String(i),
      score: 0.9,
    }));
    const decode = async (jpeg: Buffer) => (await sharp(jpeg).raw().toBuffer()) as Uint8Array;
    const oneDrawing = await decode(
      await renderSnapshot(
        frame,
        buildOverlay({ width: 768, height: 576, osd: DEFAULT_OSD, zones: [zone], objects }),
      ),
    );
    // Twice: the second one blends the kept zone layer.
    for (let round = 0; round < 2; round++) {
      const layered = await decode(
        Buffer.from(await appSnapshot(frame, DEFAULT_OSD, [zone], shown), 'base64'),
      );
      let total = 0;
      let worst = 0;
      for (let i = 0; i < layered.length; i++) {
        const difference = Math.abs((layered[i] as number) - (oneDrawing[i] as number));
        total += difference;
        worst = Math.max(worst, difference);
      }
      // Compositing in two steps rounds differently by a level or two at most (JPEG spreads it a little).
      expect(total / layered.length).toBeLessThan(0.2);
      expect(worst).toBeLessThan(24);
    }
    expect(isColor(pixel(oneDrawing, 768, 492, 190), [255, 59, 48], 40)).toBe(true);
  });

  it('measures the render time (printed, not asserted)', async () => {
    const original = firstVideoFrame();
    const hd = await sharp(original.data, { raw: { width: 768, height: 576, channels: 3 } })
      .resize(1280, 720, { fit: 'fill' })
      .raw()
      .toBuffer();
    for (const frame of [original, { data: new Uint8Array(hd), width: 1280, height: 720 }]) {
      // The same scene at either size: the cost grows with the area the drawings span.
      const [sx, sy] = [frame.width / 768, frame.height / 576];
      const tenObjects = Array.from({ length: 10 }, (_, i) => {
        const object = objects[i % objects.length] as OverlayObject;
        const x1 = 20 + i * 70;
        return { ...object, x1: x1 * sx, x2: (x1 + 50) * sx, y1: object.y1 * sy, y2: object.y2 * sy };
      });
      const region = zones[0] as OverlayZone;
      const zone = { ...region, points: region.points.map(([x = 0, y = 0]) => [x * sx, y * sy]) };
      const input = {
        width: frame.width,
        height: frame.height,
        osd: DEFAULT_OSD,
        zones: [zone],
        objects: tenObjects,
      };
      const meanMs = async (render: (overlay: ReturnType<typeof buildOverlay>) => Promise<Buffer>) => {
        const runs = 50;
        const start = performance.now();
        for (let i = 0; i < runs; i++) await render(buildOverlay(input));
        return ((performance.now() - start) / runs).toFixed(1);
      };
      const snapshot = await meanMs((overlay) => renderSnapshot(frame, overlay));
      const raw = await meanMs((overlay) => renderOverlay(frame, overlay));
      console.log(
        `OSD ${frame.width}x${frame.height}, 10 objects + 1 polygon, mean of 50: renderSnapshot ${snapshot} ms, renderOverlay ${raw} ms`,
      );
    }
  });
});
