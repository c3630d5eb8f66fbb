import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Box, Frame } from '../../engine/vision/types';
import { FIXTURES } from './fixtures';

// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/**
 * A generated benchmark for change detection: pairs of views of one fixture image (the "world")
 * taken from two camera poses with two exposures, with objects pasted into the second view at known
 * boxes, each shot saved as JPEG. Deterministic for a seed, so figures can be compared across changes.
 */

export interface ChangePair {
  name: string;
  /** image_a: the earlier shot. */
  before: Frame;
  /** image_b: the later shot; truth boxes are in its pixels. */
  after: Frame;
  /** The pasted objects; empty for an unchanged pair. */
  truth: Box[];
  /** The true registration: a 3 x 3 row-major homography from `after`'s pixels to `before`'s. */
  motion: number[];
}

export interface PairOptions {
  seed: number;
  /** Pairs with one to three pasted objects... */
  changed: number;
  /** ...and pairs of the same scene with only the camera and exposure changed. */
  unchanged: number;
  /** Each view is this share of its world's width and height. */
  viewShare?: number;
}

const WORLDS = ['leuvenB.jpg', 'basketball1.png'];

/** mulberry32: a small, well-mixed 32-bit generator. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function fixtureFrame(name: string): Promise<Frame> {
  const { data, info } = await sharp(readFileSync(join(FIXTURES, 'media', name)))
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height };
}

/** Where a camera looks: view pixel (x, y) shows world (cx, cy) + scale * R(angle) * (x - w/2, y - h/2) + (dx, dy). */
interface Pose {
  angle: number;
  scale: number;
  dx: number;
  dy: number;
}

/** Exposure: per-channel gain (white balance times exposure), offset and gamma, clipped like a sensor. */
interface Exposure {
  gains: [number, number, number];
  offset: number;
  gamma: number;
}

export async function changePairs(options: PairOptions): Promise<ChangePair[]> {
  const next = random(options.seed);
  const between = (low: number, high: number) => low + (high - low) * next();
  const worlds = await Promise.all(WORLDS.map(fixtureFrame));
  const share = options.viewShare ?? 0.6;
  const pairs: ChangePair[] = [];
  for (let k = 0; k < options.changed + options.unchanged; k++) {
    const changed = k < options.changed;
    const w = k % worlds.length;
    const world = worlds[w] as Frame;
    const other = worlds[(w + 1) % worlds.length] as Frame;
    const width = Math.round(world.width * share);
    const height = Math.round(world.height * share);
    const pose: Pose = {
      angle: (between(-10, 10) * Math.PI) / 180,
      scale: between(0.9, 1.1),
      dx: between(-15, 15),
      dy: between(-15, 15),
    };
    const white = between(0.92, 1.08);
    const gain = between(0.8, 1.2);
    const exposure: Exposure = {
      gains: [gain * white, gain, gain / white],
      offset: between(-15, 15),
      gamma: between(0.75, 1.35),
    };
    const before = view(world, width, height, { angle: 0, scale: 1, dx: 0, dy: 0 });
    const after = view(world, width, height, pose);
    const truth = changed ? paste(after, world, other, 1 + Math.floor(next() * 3), next) : [];
    expose(after, exposure);
    const qualities = [Math.round(between(60, 95)), Math.round(between(60, 95))] as const;
    pairs.push({
      name: `${changed ? 'changed' : 'unchanged'} ${k} on ${WORLDS[w]}: angle ${((pose.angle * 180) / Math.PI).toFixed(1)} scale ${pose.scale.toFixed(2)} shift (${pose.dx.toFixed(1)}, ${pose.dy.toFixed(1)}) gain ${gain.toFixed(2)} gamma ${exposure.gamma.toFixed(2)} jpeg ${qualities.join('/')}`,
      before: await jpeg(before, qualities[0]),
      after: await jpeg(after, qualities[1]),
      truth,
      motion: motionOf(pose, width, height),
    });
  }
  return pairs;
}

/** after(x, y) shows the world where before(u, v) does: (u, v) = H (x, y), the before view at the identity pose. */
function motionOf(pose: Pose, width: number, height: number): number[] {
  const cos = Math.cos(pose.angle) * pose.scale;
  const sin = Math.sin(pose.angle) * pose.scale;
  const [cx, cy] = [width / 2, height / 2];
  return [
    cos,
    -sin,
    cx + pose.dx - cos * cx + sin * cy,
    sin,
    cos,
    cy + pose.dy - sin * cx - cos * cy,
    0,
    0,
    1,
  ];
}

/** The world as a camera at this pose sees it, sampled bilinearly. */
function view(world: Frame, width: number, height: number, pose: Pose): Frame {
  const data = new Uint8Array(width * height * 3);
  const cos = Math.cos(pose.angle) * pose.scale;
  const sin = Math.sin(pose.angle) * pose.scale;
  const cx = world.width / 2 + pose.dx;
  const cy = world.height / 2 + pose.dy;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const u = x - width / 2;
      const v = y - height / 2;
      sample(world, cx + cos * u - sin * v, cy + sin * u + cos * v, data, (y * width + x) * 3);
    }
  }
  return { data, width, height };
}

function sample(image: Frame, x: number, y: number, out: Uint8Array, at: number): void {
  const x0 = Math.max(0, Math.min(image.width - 2, Math.floor(x)));
  const y0 = Math.max(0, Math.min(image.height - 2, Math.floor(y)));
  const ax = Math.max(0, Math.min(1, x - x0));
  const ay = Math.max(0, Math.min(1, y - y0));
  const p = (y0 * image.width + x0) * 3;
  const q = p + image.width * 3;
  for (let c = 0; c < 3; c++) {
    const top = (image.data[p + c] as number) * (1 - ax) + (image.data[p + 3 + c] as number) * ax;
    const bottom = (image.data[q + c] as number) * (1 - ax) + (image.data[q + 3 + c] as number) * ax;
    out[at + c] = Math.round(top * (1 - ay) + bottom * ay);
  }
}

/**
 * Pastes `count` objects into the view, each cut from a random place of the world or of the other
 * fixture, apart from each other, and each different enough from what it covers that a person would
 * call it a change (most of its pixels differ by more than 30 grey levels). Returns their boxes.
 */
function paste(target: Frame, world: Frame, other: Frame, count: number, next: () => number): Box[] {
  const boxes: Box[] = [];
  for (let tries = 0; boxes.length < count && tries < 200; tries++) {
    const source = next() < 0.5 ? world : other;
    const w = Math.round(36 + next() * 74);
    const h = Math.round(30 + next() * 60);
    const sx = Math.floor(next() * (source.width - w));
    const sy = Math.floor(next() * (source.height - h));
    const box = {
      x1: 8 + Math.floor(next() * (target.width - w - 16)),
      y1: 8 + Math.floor(next() * (target.height - h - 16)),
      x2: 0,
      y2: 0,
    };
    box.x2 = box.x1 + w;
    box.y2 = box.y1 + h;
    if (
      boxes.some((b) => b.x1 < box.x2 + 20 && box.x1 < b.x2 + 20 && b.y1 < box.y2 + 20 && box.y1 < b.y2 + 20)
    )
      continue;
    let differing = 0;
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const s = ((sy + y) * source.width + sx + x) * 3;
        const t = ((box.y1 + y) * target.width + box.x1 + x) * 3;
        if (Math.abs(grey(source.data, s) - grey(target.data, t)) > 30) differing++;
      }
    if (differing < 0.8 * w * h) continue;
    for (let y = 0; y < h; y++) {
      const s = ((sy + y) * source.width + sx) * 3;
      target.data.set(source.data.subarray(s, s + w * 3), ((box.y1 + y) * target.width + box.x1) * 3);
    }
    boxes.push(box);
  }
  return boxes;
}

const grey = (data: Uint8Array, i: number) =>
  0.299 * (data[i] as number) + 0.587 * (data[i + 1] as number) + 0.114 * (data[i + 2] as number);

function expose(frame: Frame, { gains, offset, gamma }: Exposure): void {
  const luts = gains.map((gain) => {
    const lut = new Uint8Array(256);
    for (let v = 0; v < 256; v++) {
      const linear = Math.max(0, Math.min(255, v * gain + offset)) / 255;
      lut[v] = Math.round(255 * linear ** gamma);
    }
    return lut;
  });
  for (let i = 0; i < frame.data.length; i++)
    frame.data[i] = (luts[i % 3] as Uint8Array)[frame.data[i] as number] as number;
}

async function jpeg(frame: Frame, quality: number): Promise<Frame> {
  const raw = { width: frame.width, height: frame.height, channels: 3 as const };
  const { data, info } = await sharp(await sharp(frame.data, { raw }).jpeg({ quality }).toBuffer())
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height };
}

export function iou(a: Box, b: Box): number {
  const w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0;
  const area = (box: Box) => (box.x2 - box.x1) * (box.y2 - box.y1);
  return (w * h) / (area(a) + area(b) - w * h);
}

export interface Scores {
  /** Regions on changed pairs that match a truth box at IoU >= 0.5, and all regions found there. */
  matched: number;
  found: number;
  /** Truth boxes, and regions on unchanged pairs. */
  truths: number;
  falseOnUnchanged: number;
  precision: number;
  recall: number;
}

/** Region precision and recall at IoU >= 0.5 (each truth box matched once, best first). */
export function score(results: Array<{ truth: Box[]; regions: Box[] }>): Scores {
  let matched = 0;
  let found = 0;
  let truths = 0;
  let falseOnUnchanged = 0;
  for (const { truth, regions } of results) {
    if (truth.length === 0) {
      falseOnUnchanged += regions.length;
      continue;
    }
    found += regions.length;
    truths += truth.length;
    const candidates = truth
      .flatMap((t, i) => regions.map((r, j) => ({ i, j, overlap: iou(t, r) })))
      .filter((c) => c.overlap >= 0.5)
      .sort((a, b) => b.overlap - a.overlap);
    const usedTruth = new Set<number>();
    const usedRegion = new Set<number>();
    for (const { i, j } of candidates) {
      if (usedTruth.has(i) || usedRegion.has(j)) continue;
      usedTruth.add(i);
      usedRegion.add(j);
      matched++;
    }
  }
  return {
    matched,
    found,
    truths,
    falseOnUnchanged,
    precision: found > 0 ? matched / found : 1,
    recall: truths > 0 ? matched / truths : 1,
  };
}
