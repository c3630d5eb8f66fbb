import { spawn } from 'node:child_process';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackBody } from '../engine/events/schema';
import { InferencePool } from '../engine/inference/pool';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { compileCheck } from '../engine/schema/ajv';
import type { TaskView } from '../engine/tasks/schema';
import { pointInPolygon } from '../engine/vision/geometry';
import type { Detection } from '../engine/vision/types';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { FIXTURE_MODEL, installExamplePackage } from './helpers/example-package';
import { Receiver } from './helpers/receiver';
import { clientsOf, encodedFixture, RtmpSource } from './helpers/rtmp-source';

/**
 * The whole video path with real parts: a live RTMP camera (ffmpeg serving the fixture video), the
 * engine's ffmpeg, onnxruntime with the fixture model, tracking, rules, OSD, the outbox and a
 * callback receiver on loopback.
 */

const FRAMES = 260;
const LEFT_HALF: [number, number][] = [
  [0, 0],
  [384, 0],
  [384, 576],
  [0, 576],
];
const checkBody = compileCheck(CallbackBody, 'callback');

type Message = Extract<CallbackBody, { event: 'message' }>;

let t: TestEngine;
let receiver: Receiver;

beforeAll(async () => {
  encodedFixture(FRAMES);
  t = await startTestEngine();
  receiver = await Receiver.start();
  expect(await installExamplePackage(t)).toBe(200);
}, 120_000);

/** Cameras a test started; stopped here too, so a failing test leaves no server behind. */
const cameras: RtmpSource[] = [];

afterAll(async () => {
  await Promise.all(cameras.map((camera) => camera.kill()));
  await t?.stop();
  await receiver?.close();
});

const messages = (taskId: string) =>
  receiver.accepted
    .map((r) => r.body as CallbackBody)
    .filter((b): b is Message => b.event === 'message' && b.task_id === taskId);

const objectsOf = (message: Message) => message.data.rules[0]?.objects ?? [];

const foot = (o: { x: number; y: number; h: number }) => [o.x, o.y + o.h / 2] as const;

const iou = (a: { x: number; y: number; w: number; h: number }, b: typeof a) => {
  const w = Math.min(a.x + a.w / 2, b.x + b.w / 2) - Math.max(a.x - a.w / 2, b.x - b.w / 2);
  const h = Math.min(a.y + a.h / 2, b.y + b.h / 2) - Math.max(a.y - a.h / 2, b.y - b.h / 2);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / (a.w * a.h + b.w * b.h - w * h);
};

async function setPersonInterval(seconds: number): Promise<void> {
  const answer = await t.call('PUT', '/api/zapk/coco-yolox-nano/app/person', {
    json: { rule: { interval: seconds } },
  });
  expect(answer.body.code).toBe(0);
}

/** The fixture frames as the engine decodes them from the stream, run through the model directly. */
async function referencePersons(frameIndexes: number[]): Promise<Map<number, Detection[]>> {
  const wanted = new Set(frameIndexes);
  const size = 768 * 576 * 3;
  const frames = new Map<number, Uint8Array>();
  await new Promise<void>((done, fail) => {
    const child = spawn(findFfmpeg(), [
      '-loglevel',
      'error',
      '-i',
      encodedFixture(FRAMES),
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-',
    ]);
    let buffered = Buffer.alloc(0);
    let index = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= size) {
        if (wanted.has(index)) frames.set(index, new Uint8Array(buffered.subarray(0, size)));
        buffered = buffered.subarray(size);
        index += 1;
      }
    });
    child.on('error', fail);
    child.on('close', () => done());
  });
  const pool = new InferencePool({ workers: 1 });
  const result = new Map<number, Detection[]>();
  for (const [index, data] of frames) {
    const { detections } = await pool.detect(FIXTURE_MODEL, {
      data,
      width: 768,
      height: 576,
    });
    result.set(
      index,
      detections.filter((d) => d.classIndex === 0 && d.score >= 0.55),
    );
  }
  await pool.close();
  return result;
}

describe('video task on a live RTMP source', () => {
  it('reports the persons in the polygon with exact callbacks, stable track ids and the interval', async () => {
    await setPersonInterval(0);
    const source = await RtmpSource.create(`e2e-${process.pid}`, FRAMES);
    cameras.push(source);
    source.start();
    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['person'],
        video_url: source.url,
        business_id: 'gate-7',
        report_url: receiver.url,
        app_configs: [{ app_id: 'person', polygon: LEFT_HALF }],
        // Its boxes are checked against the model run on whole frames: the motion gate's crops find
        // the same persons with other boxes (motion-gate-engine.test.ts tests the gate).
        motion_gate: false,
      },
    });
    expect(started.body).toMatchObject({ code: 0 });
    const taskId = (started.body.data as { task_id: string }).task_id;

    await receiver.waitFor(
      'frame 205 analysed',
      () => messages(taskId).some((m) => m.data.frame.id > 205),
      60_000,
    );
    const seen = messages(taskId);

    // Exactly the schema of part 6 with the documented extensions; frames keep their order.
    for (const body of seen) {
      const checked = checkBody(body);
      expect(checked.ok ? 'valid' : checked.error).toBe('valid');
    }
    const first = seen[0] as Message;
    expect(first).toMatchObject({ event: 'message', app_id: 'person', business_id: 'gate-7' });
    const ids = seen.map((m) => m.data.frame.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const seqs = seen.map((m) => m.seq);
    expect(seqs).toEqual(seqs.map((_, i) => first.seq + i));
    const snapshot = await sharp(Buffer.from(first.data.rules[0]?.image ?? '', 'base64')).metadata();
    expect([snapshot.format, snapshot.width, snapshot.height]).toEqual(['jpeg', 768, 576]);

    // Every reported object stands in the polygon; each fired rule is the person class rule.
    for (const message of seen) {
      expect(message.data.rules.map((r) => r.id)).toEqual(['person:0']);
      for (const object of objectsOf(message)) {
        expect(pointInPolygon(foot(object), LEFT_HALF)).toBe(true);
        expect(object.score).toBeGreaterThanOrEqual(0.55);
      }
    }

    // The persons of MODEL.md's frames 100 and 200 (frame ids count from 1), checked against the
    // model run directly on the same decoded frames.
    const reference = await referencePersons([100, 200]);
    expect(reference.get(100)?.length).toBeGreaterThanOrEqual(5);
    expect(reference.get(200)?.length).toBeGreaterThanOrEqual(6);
    let compared = 0;
    for (const index of [100, 200]) {
      const message = seen.find((m) => m.data.frame.id === index + 1);
      if (!message) continue;
      compared += 1;
      const expected = (reference.get(index) ?? []).filter((d) =>
        pointInPolygon([(d.x1 + d.x2) / 2, d.y2], LEFT_HALF),
      );
      const reported = objectsOf(message);
      expect(reported.length).toBe(expected.length);
      for (const d of expected) {
        const box = { x: (d.x1 + d.x2) / 2, y: (d.y1 + d.y2) / 2, w: d.x2 - d.x1, h: d.y2 - d.y1 };
        expect(Math.max(...reported.map((o) => iou(o, box)))).toBeGreaterThan(0.9);
      }
    }
    expect(compared).toBeGreaterThanOrEqual(1);

    // The same walker keeps its track id from one analysed frame to the next.
    let pairs = 0;
    let kept = 0;
    seen.slice(1).forEach((after, i) => {
      const before = seen[i] as Message;
      if (after.data.frame.id - before.data.frame.id > 2) return;
      for (const object of objectsOf(after)) {
        const match = objectsOf(before).find((o) => iou(o, object) > 0.6);
        if (!match) continue;
        pairs += 1;
        if (match.track_id === object.track_id) kept += 1;
      }
    });
    expect(pairs).toBeGreaterThan(100);
    expect(kept / pairs).toBeGreaterThan(0.95);

    // A rule edit reaches the running task: from now on, 2 s at least between two callbacks.
    await setPersonInterval(2);
    const changedAt = Date.now();
    await receiver.waitFor(
      'three callbacks under the 2 s interval',
      () => messages(taskId).filter((m) => m.timestamp > changedAt + 500).length >= 3,
      20_000,
    );
    const later = messages(taskId).filter((m) => m.timestamp > changedAt + 500);
    const gaps = later.slice(1).map((m, i) => m.timestamp - (later[i] as Message).timestamp);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(2000);

    const listed = (await t.call('GET', '/api/tasks')).body.data as TaskView[];
    expect(listed.find((task) => task.task_id === taskId)?.health.stream).toMatchObject({
      state: 'running',
      width: 768,
      height: 576,
    });

    expect((await t.call('DELETE', `/api/task/${taskId}`)).body.code).toBe(0);
    await eventually('no ffmpeg left on the stream', () => clientsOf(source.url).length === 0, 5_000, 100);
    await source.kill();
  }, 120_000);
});

describe('a video task whose source dies', () => {
  it('fills black frames while lost, resumes when the source is back, and closes with code 2 after 5 min', async () => {
    await setPersonInterval(0);
    const source = await RtmpSource.create(`cut-${process.pid}`, FRAMES);
    cameras.push(source);
    source.start();
    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['person'],
        video_url: source.url,
        report_url: receiver.url,
      },
    });
    const taskId = (started.body.data as { task_id: string }).task_id;
    const task = async () =>
      ((await t.call('GET', '/api/tasks')).body.data as TaskView[]).find(
        (listed) => listed.task_id === taskId,
      );
    const kinds = () =>
      receiver.accepted.map((r) => r.body as CallbackBody).filter((b) => b.task_id === taskId);
    await receiver.waitFor('detections', () => messages(taskId).length > 0, 30_000);

    await source.kill();
    await receiver.waitFor('stream_lost', () => kinds().some((b) => b.event === 'stream_lost'), 15_000);
    const lost = await task();
    expect(lost?.status).toBe('stream_lost');
    await new Promise((done) => setTimeout(done, 1_500));
    expect((await task())?.health.stream?.black_frames).toBeGreaterThanOrEqual(10);

    // The camera comes back; the watchdog's backoff runs on the engine's clock, moved by hand here.
    source.start();
    const messagesBefore = messages(taskId).length;
    const until = Date.now() + 30_000;
    while ((await task())?.status !== 'running' && Date.now() < until) {
      t.advance(1_000);
      await new Promise((done) => setTimeout(done, 300));
    }
    await receiver.waitFor(
      'stream_restored',
      () => kinds().some((b) => b.event === 'stream_restored'),
      15_000,
    );
    await receiver.waitFor('detections again', () => messages(taskId).length > messagesBefore + 3, 30_000);
    expect((await task())?.health.stream?.reconnects).toBe(1);

    // Gone for good: 5 min on the engine's clock close the task with close_code 2.
    await source.kill();
    await receiver.waitFor(
      'second stream_lost',
      () => kinds().filter((b) => b.event === 'stream_lost').length === 2,
      15_000,
    );
    t.advance(5 * 60_000);
    expect(await task()).toMatchObject({ status: 'closed', close_code: 2 });
    await receiver.waitFor('task_closed', () => kinds().some((b) => b.event === 'task_closed'), 15_000);
    const closed = kinds().find((b) => b.event === 'task_closed');
    expect(closed?.data).toMatchObject({ close_code: 2 });
    await eventually('no ffmpeg left on the stream', () => clientsOf(source.url).length === 0, 5_000, 100);
  }, 150_000);
});
