import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { letterboxFit, scaledFor } from '../engine/inference/letterbox';
import { InferencePool } from '../engine/inference/pool';
import type { Detection, Frame } from '../engine/inference/types';
import { type DetectorInput, FramePairer } from '../engine/media/detector-input';
import { FramePool } from '../engine/media/frame-pool';
import type { PooledFrame } from '../engine/media/frame-reader';
import { FrameSource, type SourceFrame } from '../engine/media/frame-source';
import type { ModelInput } from '../engine/packages/manifest';
import { FIXTURE_MODEL } from './helpers/example-package';
import { FIXTURES } from './helpers/fixtures';

const FFMPEG = '/usr/bin/ffmpeg';
const tmp = mkdtempSync(join(tmpdir(), 'vc-detector-input-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('FramePairer', () => {
  const pool = new FramePool(1 << 20);
  const frame = (fill: number, released: number[]): PooledFrame => {
    const data = pool.take(3);
    data.fill(fill);
    return { data, width: 1, height: 1, release: () => released.push(fill) };
  };

  it('pairs the nth frame with the nth scaled copy, whichever comes first, and releases both once', () => {
    const released: number[] = [];
    const pairer = new FramePairer();
    expect(pairer.addFrame(frame(1, released))).toEqual([]);
    expect(pairer.addFrame(frame(2, released))).toEqual([]);
    const [first] = pairer.addScaled(frame(11, released));
    expect(first?.data[0]).toBe(1);
    expect(first?.scaled?.data[0]).toBe(11);
    const [second] = pairer.addScaled(frame(12, released));
    expect(pairer.addScaled(frame(13, released))).toEqual([]);
    const [third] = pairer.addFrame(frame(3, released));
    expect([second?.data[0], second?.scaled?.data[0], third?.data[0], third?.scaled?.data[0]]).toEqual([
      2, 12, 3, 13,
    ]);
    first?.release();
    third?.release();
    expect(released).toEqual([1, 11, 3, 13]);
  });

  it('calls five frames of one output without a pair a stream out of step, giving every buffer back', () => {
    const released: number[] = [];
    const pairer = new FramePairer();
    for (const fill of [1, 2, 3, 4]) pairer.addFrame(frame(fill, released));
    expect(() => pairer.addFrame(frame(5, released))).toThrow(
      '5 frames of one output of ffmpeg without their pair in the other',
    );
    expect(released).toEqual([1, 2, 3, 4, 5]);
  });
});

/** A moving test pattern of this size, 10 fps, 2 s. */
function pattern(width: number, height: number): string {
  const file = join(tmp, `testsrc2-${width}x${height}.mkv`);
  execFileSync(FFMPEG, [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi'],
    ...['-i', `testsrc2=size=${width}x${height}:rate=10`, '-t', '2', '-c:v', 'ffv1', file],
  ]);
  return file;
}

/** The frames a FrameSource reads from the file, up to `count`, with what ffmpeg scaled for the input. */
async function framesOf(file: string, input: DetectorInput, count: number, readInPlace = true) {
  const source = new FrameSource(
    { kind: 'file', input: file },
    { ffmpeg: FFMPEG, detectorInput: input, readRate: 4, readInPlace },
  );
  const frames: SourceFrame[] = [];
  source.on('frame', (frame) => {
    frames.push({
      ...frame,
      data: frame.data.slice(),
      scaled: frame.scaled && { ...frame.scaled, data: frame.scaled.data.slice() },
    });
    frame.release();
    if (frames.length === count) void source.stop();
  });
  source.start();
  await once(source, 'exit');
  return { frames, args: source.args(readInPlace) };
}

/** Mean absolute difference between ffmpeg's scaled copy and the frame resized here (sharp, bilinear). */
async function differenceFromResize(frame: Frame, scaled: Frame): Promise<number> {
  const resized = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .resize(scaled.width, scaled.height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  let sum = 0;
  for (let i = 0; i < resized.length; i++)
    sum += Math.abs((resized[i] as number) - (scaled.data[i] as number));
  return sum / resized.length;
}

const INPUT = FIXTURE_MODEL.spec.input as ModelInput;

describe('frames scaled by ffmpeg to a model input (real ffmpeg)', () => {
  it.each([
    ['768x576 (within the bound)', { width: 768, height: 576 }, INPUT],
    ['1920x1080 (bounded to 1280x720)', { width: 1920, height: 1080 }, INPUT],
    [
      'a 1000x334 strip centred in 640x384',
      { width: 1000, height: 334 },
      { ...INPUT, width: 640, height: 384, letterbox: 'center' },
    ],
    ['a 334x1000 portrait', { width: 334, height: 1000 }, INPUT],
    [
      '640x360 stretched to 320x320',
      { width: 640, height: 360 },
      { ...INPUT, width: 320, height: 320, letterbox: 'stretch' },
    ],
  ] as const)(
    '%s: each frame carries its own picture at the size letterboxFit gives',
    async (_name, size, input) => {
      const { frames, args } = await framesOf(pattern(size.width, size.height), input, 6);
      expect(args).toContain('pipe:3');
      expect(frames).toHaveLength(6);
      const first = frames[0] as SourceFrame;
      const fit = letterboxFit(first.width, first.height, input);
      for (const frame of frames) {
        expect(frame.scaled && [frame.scaled.width, frame.scaled.height]).toEqual([
          fit.resizedWidth,
          fit.resizedHeight,
        ]);
        expect(scaledFor(frame, input)?.scaled).toBe(frame.scaled);
      }
      // testsrc2 moves every frame: a copy paired with the wrong frame differs far more than resampling does.
      const own = await differenceFromResize(frames[3] as Frame, (frames[3] as SourceFrame).scaled as Frame);
      const neighbour = await differenceFromResize(
        frames[3] as Frame,
        (frames[4] as SourceFrame).scaled as Frame,
      );
      expect(own).toBeLessThan(3);
      expect(neighbour).toBeGreaterThan(1.5 * own);
    },
  );

  it('writes no scaled copy through a stdout pipe (Windows), where the models resize the frames', async () => {
    const { frames, args } = await framesOf(pattern(320, 240), INPUT, 3, false);
    expect(args).not.toContain('pipe:3');
    expect(frames.map((frame) => frame.scaled)).toEqual([undefined, undefined, undefined]);
  });
});

describe('an inference pool given scaled copies (real onnxruntime)', () => {
  const pool = new InferencePool({ workers: 1, intraOpThreads: 1 });
  afterAll(() => pool.close());

  const basketball = async (): Promise<Frame> => {
    const { data, info } = await sharp(join(FIXTURES, 'media', 'basketball1.png'))
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  };
  const resized = async (frame: Frame, width: number, height: number, flop = false): Promise<Frame> => {
    const image = sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } });
    const data = await image
      .flop(flop)
      .resize(width, height, { fit: 'fill', kernel: 'linear' })
      .raw()
      .toBuffer();
    return { data, width, height };
  };
  const persons = (detections: Detection[]) =>
    detections.filter((d) => d.classIndex === 0).sort((a, b) => a.x1 - b.x1);

  it('runs the model on the copy and maps its boxes to the frame: the same players within 3 px', async () => {
    const frame = await basketball();
    const fit = letterboxFit(frame.width, frame.height, INPUT);
    const scaled = await resized(frame, fit.resizedWidth, fit.resizedHeight);
    const direct = persons((await pool.detect(FIXTURE_MODEL, frame)).detections);
    const viaCopy = await pool.detect(FIXTURE_MODEL, { ...frame, scaled });
    expect(viaCopy.frame.data).toBe(frame.data);
    const found = persons(viaCopy.detections);
    expect(found).toHaveLength(2);
    expect(direct).toHaveLength(2);
    for (const [i, person] of found.entries())
      for (const key of ['x1', 'y1', 'x2', 'y2'] as const)
        expect(Math.abs(person[key] - (direct[i] as Detection)[key])).toBeLessThan(3);
  });

  it('sees the copy, not the frame: a mirrored copy gives mirrored players', async () => {
    const frame = await basketball();
    const fit = letterboxFit(frame.width, frame.height, INPUT);
    const mirrored = await resized(frame, fit.resizedWidth, fit.resizedHeight, true);
    const direct = persons((await pool.detect(FIXTURE_MODEL, frame)).detections);
    const found = persons((await pool.detect(FIXTURE_MODEL, { ...frame, scaled: mirrored })).detections);
    expect(found).toHaveLength(2);
    const flipped = direct
      .map((d) => ({ x1: frame.width - d.x2, x2: frame.width - d.x1 }))
      .sort((a, b) => a.x1 - b.x1);
    for (const [i, person] of found.entries()) {
      expect(Math.abs(person.x1 - (flipped[i]?.x1 as number))).toBeLessThan(6);
      expect(Math.abs(person.x2 - (flipped[i]?.x2 as number))).toBeLessThan(6);
    }
  });

  it('letterboxes the frame itself when the copy is not the size the frame takes in the input', async () => {
    const frame = await basketball();
    const wrong = await resized(frame, 100, 100, true);
    const direct = (await pool.detect(FIXTURE_MODEL, frame)).detections;
    expect(scaledFor({ ...frame, scaled: wrong }, INPUT)).toBeNull();
    expect((await pool.detect(FIXTURE_MODEL, { ...frame, scaled: wrong })).detections).toEqual(direct);
  });
});
