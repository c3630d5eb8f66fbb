import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackBody } from '../engine/events/schema';
import { InferencePool } from '../engine/inference/pool';
import { boundingScaleFilter } from '../engine/media/analysis-size';
import { findFfmpeg } from '../engine/media/ffmpeg';
import type { TaskView } from '../engine/tasks/schema';
import { pointInPolygon } from '../engine/vision/geometry';
import type { Detection } from '../engine/vision/types';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { FIXTURE_MODEL, installExamplePackage } from './helpers/example-package';
import { Receiver } from './helpers/receiver';

/**
 * A 4K source is decoded at the analysis bound (1280x720), yet everything reported is in the
 * source's pixels: the fixture's walkers scaled by 3 into the top-left of a 3840x2160 picture, a
 * region drawn in 4K pixels, and the callbacks' boxes where the walkers are in the 4K picture.
 */

const UHD = { width: 3840, height: 2160 };
const SCALE = 3;
/** Fixture frames 90 to 149 (several walkers, MODEL.md), played in a loop: enough frames for a loaded machine that drops some. */
const FRAMES = 60;
/** A region in 4K pixels: most of the scaled fixture but its right edge and top. */
const REGION: [number, number][] = [
  [0, 150 * SCALE],
  [600 * SCALE, 150 * SCALE],
  [600 * SCALE, 576 * SCALE],
  [0, 576 * SCALE],
];

type Message = Extract<CallbackBody, { event: 'message' }>;
type Box = { x: number; y: number; w: number; h: number };

const dir = mkdtempSync(join(tmpdir(), 'vc-4k-'));
const uhdVideo = join(dir, 'uhd.mp4');
let t: TestEngine;
let receiver: Receiver;

beforeAll(async () => {
  execFileSync(findFfmpeg(), [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-ss', '9', '-i', VIDEO, '-frames:v', String(FRAMES)],
    ...['-vf', `scale=${768 * SCALE}:${576 * SCALE},pad=${UHD.width}:${UHD.height}:0:0`],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '10', uhdVideo],
  ]);
  t = await startTestEngine();
  receiver = await Receiver.start();
  expect(await installExamplePackage(t)).toBe(200);
  const rule = await t.call('PUT', '/api/zapk/coco-yolox-nano/app/person', {
    json: { rule: { interval: 0 } },
  });
  expect(rule.body.code).toBe(0);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The persons of each frame of the 4K file as the model finds them on the frame ffmpeg bounds it to
 * (1280x720, where the fixture part is at the fixture's size again), in that frame's pixels.
 */
async function referencePersons(): Promise<Detection[][]> {
  const size = 1280 * 720 * 3;
  const raw = execFileSync(
    findFfmpeg(),
    [
      ...['-loglevel', 'error', '-i', uhdVideo, '-vf', boundingScaleFilter()],
      ...['-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    ],
    { maxBuffer: size * (FRAMES + 1) },
  );
  const pool = new InferencePool({ workers: 1 });
  const persons: Detection[][] = [];
  for (let at = 0; at + size <= raw.length; at += size) {
    const data = new Uint8Array(raw.subarray(at, at + size));
    const { detections } = await pool.detect(FIXTURE_MODEL, { data, width: 1280, height: 720 });
    persons.push(detections.filter((d) => d.classIndex === 0 && d.score >= 0.55));
  }
  await pool.close();
  return persons;
}

const iou = (a: Box, b: Box) => {
  const w = Math.min(a.x + a.w / 2, b.x + b.w / 2) - Math.max(a.x - a.w / 2, b.x - b.w / 2);
  const h = Math.min(a.y + a.h / 2, b.y + b.h / 2) - Math.max(a.y - a.h / 2, b.y - b.h / 2);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / (a.w * a.h + b.w * b.h - w * h);
};

/** A reference detection (analysed frame's pixels) as the box it is in the 4K picture. */
const inUhd = (d: Detection): Box => ({
  x: ((d.x1 + d.x2) / 2) * SCALE,
  y: ((d.y1 + d.y2) / 2) * SCALE,
  w: (d.x2 - d.x1) * SCALE,
  h: (d.y2 - d.y1) * SCALE,
});

describe('a 4K video task', () => {
  it('decodes at 1280x720 and reports boxes, regions and sizes in the source’s 4K pixels', async () => {
    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['person'],
        video_url: uhdVideo,
        report_url: receiver.url,
        app_configs: [{ app_id: 'person', polygon: REGION }],
      },
    });
    expect(started.body.code, started.body.msg).toBe(0);
    const taskId = (started.body.data as { task_id: string }).task_id;
    const messages = () =>
      receiver.accepted
        .map((r) => r.body as CallbackBody)
        .filter((b): b is Message => b.event === 'message' && b.task_id === taskId);
    // The first pass over the file: frame ids 1 to 60 are its frames 0 to 59.
    await eventually(
      'the first pass over the file analysed',
      async () => {
        const { health } = (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
        return health.frames_analysed + health.frames_dropped > FRAMES;
      },
      90_000,
    );
    await receiver.waitFor(
      'its callbacks',
      () => messages().some((m) => m.data.frame.id >= FRAMES - 5),
      10_000,
    );
    const seen = messages().filter((m) => m.data.frame.id <= FRAMES);
    expect(seen.length).toBeGreaterThan(5);

    const task = (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
    expect(task.health.stream).toMatchObject(UHD);
    expect(task.app_configs).toEqual([{ app_id: 'person', polygon: REGION }]);
    const first = seen[0] as Message;
    expect(first.data.frame).toMatchObject(UHD);
    // Snapshots are drawn on the frame as analysed.
    const snapshot = await sharp(Buffer.from(first.data.rules[0]?.image ?? '', 'base64')).metadata();
    expect([snapshot.width, snapshot.height]).toEqual([1280, 720]);

    const reference = await referencePersons();
    expect(reference).toHaveLength(FRAMES);
    let compared = 0;
    for (const message of seen) {
      // Frames are numbered from 1; a neighbour is allowed for a frame ffmpeg's rate filter moved.
      const index = message.data.frame.id - 1;
      const candidates = [index - 1, index, index + 1].flatMap((i) => reference[i] ?? []).map(inUhd);
      for (const object of message.data.rules[0]?.objects ?? []) {
        expect(object.x - object.w / 2).toBeGreaterThanOrEqual(-1);
        expect(object.y - object.h / 2).toBeGreaterThanOrEqual(-1);
        expect(object.x + object.w / 2).toBeLessThanOrEqual(UHD.width + 1);
        expect(object.y + object.h / 2).toBeLessThanOrEqual(UHD.height + 1);
        expect(pointInPolygon([object.x, object.y + object.h / 2], REGION)).toBe(true);
        // Where the walker is in the 4K picture: its box on the analysed frame scaled by 3.
        expect(Math.max(0, ...candidates.map((box) => iou(object, box)))).toBeGreaterThan(0.9);
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThanOrEqual(10);
    expect((await t.call('DELETE', `/api/task/${taskId}`)).body.code).toBe(0);
  }, 150_000);
});
