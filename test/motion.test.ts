import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { MOTION_DEFAULTS, MotionDetector } from '../engine/inference/motion';
import { iou } from '../engine/inference/nms';
import type { Box, Detection, Frame } from '../engine/vision/types';
import { FIXTURES } from './helpers/fixtures';

const WARMUP = MOTION_DEFAULTS.warmupFrames;
const SQUARE_WIDTH = 40;
const SQUARE_HEIGHT = 60;
const STEP = 10;

/** xorshift32: reproducible noise without a dependency. */
function randomSource(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4294967296;
  };
}

/**
 * A textured still scene (gray levels ~40..200) that frames re-render with fresh sensor noise, an
 * optional brightness offset and solid squares; phase changes the pattern for a different scene.
 */
class SyntheticScene {
  private readonly texture: Uint8Array;
  /** Twice the frame's length of noise; each frame reads it from a random offset. */
  private readonly noise: Int8Array;
  private readonly random: () => number;

  constructor(
    readonly width: number,
    readonly height: number,
    phase = 0,
  ) {
    const random = randomSource(7 + phase * 1000);
    this.random = randomSource(99 + phase);
    this.texture = new Uint8Array(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const pattern = 120 + 55 * Math.sin(x / 23 + phase) * Math.cos(y / 19 + phase);
        const value = pattern + (random() - 0.5) * 40;
        const p = (y * width + x) * 3;
        this.texture[p] = value + 8;
        this.texture[p + 1] = value;
        this.texture[p + 2] = value - 8;
      }
    }
    this.noise = new Int8Array(this.texture.length * 2);
    for (let i = 0; i < this.noise.length; i++) this.noise[i] = (random() - 0.5) * 30;
  }

  frame(squares: { box: Box; value: number }[] = [], brightness = 0): Frame {
    const data = new Uint8Array(this.texture.length);
    const offset = Math.floor(this.random() * this.texture.length);
    for (let i = 0; i < data.length; i++) {
      const noisy = (this.texture[i] as number) + brightness + (this.noise[offset + i] as number);
      data[i] = Math.max(0, Math.min(255, noisy));
    }
    for (const { box, value } of squares) {
      for (let y = box.y1; y < box.y2; y++)
        data.fill(value, (y * this.width + box.x1) * 3, (y * this.width + box.x2) * 3);
    }
    return { data, width: this.width, height: this.height };
  }
}

function squareAt(x: number, y: number): Box {
  return { x1: x, y1: y, x2: x + SQUARE_WIDTH, y2: y + SQUARE_HEIGHT };
}

/** Expects exactly one detection, on the square, scored as clear motion. */
function expectOnSquare(detections: Detection[], square: Box): void {
  expect(detections).toHaveLength(1);
  const [found] = detections as [Detection];
  expect(iou(found, square)).toBeGreaterThanOrEqual(0.6);
  expect(found.score).toBeGreaterThanOrEqual(0.7);
  expect(found.classIndex).toBe(0);
}

describe('MotionDetector on synthetic frames', () => {
  it.each([
    ['bright', 235],
    ['dark', 10],
  ])('finds one %s 40x60 square moving 10 px a frame, after the warm-up only', (_, value) => {
    const scene = new SyntheticScene(768, 576);
    const detector = new MotionDetector();
    for (let n = 0; n < 50; n++) {
      const square = squareAt(40 + n * STEP, 250);
      const detections = detector.detect(scene.frame([{ box: square, value }]));
      if (n < WARMUP) expect(detections).toEqual([]);
      else expectOnSquare(detections, square);
    }
  });

  it('reports nothing in a still scene with sensor noise over 50 frames', () => {
    const scene = new SyntheticScene(768, 576);
    const detector = new MotionDetector();
    const found = Array.from({ length: 50 }, () => detector.detect(scene.frame())).flat();
    expect(found).toEqual([]);
  });

  it('compensates a global brightness jump of +30 instead of going blind or restarting', () => {
    const scene = new SyntheticScene(768, 576);
    const detector = new MotionDetector();
    for (let n = 0; n < 20; n++) expect(detector.detect(scene.frame())).toEqual([]);
    expect(detector.detect(scene.frame([], 30))).toEqual([]);
    // Motion right after the jump is seen at once: a restart would spend these frames warming up.
    for (let n = 0; n < 20; n++) {
      const square = squareAt(40 + n * STEP, 100);
      expectOnSquare(detector.detect(scene.frame([{ box: square, value: 10 }], 30)), square);
    }
  });

  it('treats a sudden change of the whole scene as a new background, not as one giant blob', () => {
    const before = new SyntheticScene(768, 576);
    const after = new SyntheticScene(768, 576, 2);
    const detector = new MotionDetector();
    for (let n = 0; n < 20; n++) expect(detector.detect(before.frame())).toEqual([]);
    // The cut frame and the warm-up that follows it report nothing, then the new scene is the background.
    for (let n = 0; n < WARMUP + 5; n++) expect(detector.detect(after.frame())).toEqual([]);
    for (let n = 0; n < 10; n++) {
      const square = squareAt(300 + n * STEP, 300);
      expectOnSquare(detector.detect(after.frame([{ box: square, value: 235 }])), square);
    }
  });

  it(`absorbs an object that stopped within absorbFrames (${MOTION_DEFAULTS.absorbFrames}) frames`, () => {
    const scene = new SyntheticScene(320, 240);
    const detector = new MotionDetector();
    const stopFrame = 20;
    const parked = squareAt(20 + stopFrame * STEP, 100);
    const squareOf = (n: number): Box => (n < stopFrame ? squareAt(20 + n * STEP, 100) : parked);
    const absorbedBy = stopFrame + MOTION_DEFAULTS.absorbFrames;
    for (let n = 0; n < absorbedBy + 20; n++) {
      const square = squareOf(n);
      const detections = detector.detect(scene.frame([{ box: square, value: 235 }]));
      // The square's pixels were covered at most 4 frames before the stop, so it is whole until then.
      if (n >= WARMUP && n < absorbedBy - 4) expectOnSquare(detections, square);
      if (n >= absorbedBy) expect(detections).toEqual([]);
    }
  });

  it('starts over when the frame size changes, then finds motion in the new size', () => {
    const large = new SyntheticScene(768, 576);
    const small = new SyntheticScene(640, 360);
    const detector = new MotionDetector();
    for (let n = 0; n < 15; n++) {
      const square = squareAt(40 + n * STEP, 250);
      const detections = detector.detect(large.frame([{ box: square, value: 235 }]));
      if (n >= WARMUP) expectOnSquare(detections, square);
    }
    for (let n = 0; n < 25; n++) {
      const square = squareAt(40 + n * STEP, 150);
      const detections = detector.detect(small.frame([{ box: square, value: 235 }]));
      if (n < WARMUP) expect(detections).toEqual([]);
      else expectOnSquare(detections, square);
    }
  });

  it('warms up again after reset()', () => {
    const scene = new SyntheticScene(768, 576);
    const detector = new MotionDetector();
    for (let n = 0; n < 30; n++) {
      if (n === 15) detector.reset();
      const square = squareAt(40 + n * STEP, 250);
      const detections = detector.detect(scene.frame([{ box: square, value: 235 }]));
      if (n < WARMUP || (n >= 15 && n < 15 + WARMUP)) expect(detections).toEqual([]);
      else expectOnSquare(detections, square);
    }
  });

  it('rejects a frame whose buffer is shorter than width x height x 3', () => {
    const detector = new MotionDetector();
    expect(() => detector.detect({ data: new Uint8Array(100), width: 768, height: 576 })).toThrow(RangeError);
  });

  it('times detect() on 1920x1080 frames', () => {
    const scene = new SyntheticScene(1920, 1080);
    const frames = Array.from({ length: 30 }, (_, n) =>
      scene.frame([{ box: squareAt(100 + n * STEP, 500), value: 235 }]),
    );
    const detector = new MotionDetector();
    const started = performance.now();
    const found = frames.map((frame) => detector.detect(frame));
    const perFrame = (performance.now() - started) / frames.length;
    console.log(`motion detect() 1920x1080: ${perFrame.toFixed(2)} ms per frame`);
    expect(found.at(-1)).toHaveLength(1);
  });
});

describe('MotionDetector on vtest.avi (walking people, 768x576, 10 fps)', () => {
  const WIDTH = 768;
  const HEIGHT = 576;
  const FRAME_BYTES = WIDTH * HEIGHT * 3;
  const COUNT = 150;
  let frames: Frame[];

  beforeAll(() => {
    const input = ['-v', 'error', '-i', join(FIXTURES, 'media', 'vtest.avi'), '-vf', 'fps=10'];
    const output = ['-frames:v', `${COUNT}`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'];
    const decoded = spawnSync('/usr/bin/ffmpeg', [...input, ...output], {
      maxBuffer: FRAME_BYTES * COUNT + 1024,
    });
    expect(decoded.status).toBe(0);
    const raw = decoded.stdout;
    expect(raw.length).toBe(FRAME_BYTES * COUNT);
    frames = Array.from({ length: COUNT }, (_, n) => ({
      data: new Uint8Array(raw.buffer, raw.byteOffset + n * FRAME_BYTES, FRAME_BYTES),
      width: WIDTH,
      height: HEIGHT,
    }));
  });

  it('boxes the walkers with person-sized, in-frame boxes and leaves the lawn alone', async () => {
    const detector = new MotionDetector();
    const started = performance.now();
    const perFrame = frames.map((frame) => detector.detect(frame));
    const elapsed = performance.now() - started;
    console.log(`motion detect() 768x576: ${(elapsed / COUNT).toFixed(2)} ms per frame`);

    for (const detections of perFrame) {
      for (const d of detections) {
        expect(d.x1).toBeGreaterThanOrEqual(0);
        expect(d.y1).toBeGreaterThanOrEqual(0);
        expect(d.x2).toBeLessThanOrEqual(WIDTH);
        expect(d.y2).toBeLessThanOrEqual(HEIGHT);
        expect(d.x2).toBeGreaterThan(d.x1);
        expect(d.y2).toBeGreaterThan(d.y1);
        expect(d.score).toBeGreaterThanOrEqual(0);
        expect(d.score).toBeLessThanOrEqual(1);
        // Nobody crosses the lawn in the lower left during these 15 seconds.
        expect(d.x1 < 330 && d.y1 > 330).toBe(false);
      }
    }
    // Frame 100: the pair by the sign, the couple on the road, the man on the right, the far walker.
    const walkers = (perFrame[100] as Detection[]).filter((d) => d.score >= 0.5 && d.y2 - d.y1 > 30);
    expect(walkers.length).toBeGreaterThanOrEqual(3);
    // People walk through the whole clip: after the warm-up every frame has motion.
    expect(perFrame.slice(WARMUP).every((detections) => detections.length > 0)).toBe(true);

    await renderBoxes(frames[100] as Frame, perFrame[100] as Detection[], 'motion.png');
  });

  it('starts over on a cut to another camera and back, never reporting the cut as motion', async () => {
    const { data: still } = await sharp(join(FIXTURES, 'media', 'leuvenB.jpg'))
      .resize(WIDTH, HEIGHT, { fit: 'fill' })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const otherCamera: Frame = { data: new Uint8Array(still), width: WIDTH, height: HEIGHT };
    const detector = new MotionDetector();
    const sequence = [...frames.slice(0, 40), ...Array(20).fill(otherCamera), ...frames.slice(60, 100)];
    const found = sequence.map((frame) => detector.detect(frame));
    // Nothing from the cut at 40 through the warm-up after the cut back at 60: each cut restarts the model.
    expect(found.slice(40, 60 + WARMUP).flat()).toEqual([]);
    // Back on vtest, the walkers are found again.
    const walkers = (found.at(-1) as Detection[]).filter((d) => d.score >= 0.5 && d.y2 - d.y1 > 30);
    expect(walkers.length).toBeGreaterThanOrEqual(3);
  });
});

/** Writes the frame with its boxes (red: score >= 0.5, blue below) to test-output/ for a look. */
async function renderBoxes(frame: Frame, detections: Detection[], name: string): Promise<void> {
  const image = Buffer.from(frame.data);
  const paint = (x: number, y: number, color: readonly number[]): void => {
    image.set(color, (y * frame.width + x) * 3);
  };
  for (const d of detections) {
    const color = d.score >= 0.5 ? [255, 0, 0] : [0, 0, 255];
    for (let x = d.x1; x < d.x2; x++) {
      paint(x, d.y1, color);
      paint(x, d.y2 - 1, color);
    }
    for (let y = d.y1; y < d.y2; y++) {
      paint(d.x1, y, color);
      paint(d.x2 - 1, y, color);
    }
  }
  const outputDir = resolve(import.meta.dirname, '../test-output');
  mkdirSync(outputDir, { recursive: true });
  await sharp(image, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .png()
    .toFile(join(outputDir, name));
}
