// Over 400 lines on purpose: every ordering, drop and failure rule of the pipeline, each a scenario of hand-made frames.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock';
import { CallbackBody, NewEvent } from '../engine/events/schema';
import type { StreamWatchdog, WatchdogFrame } from '../engine/media/stream-watchdog';
import type { Manifest } from '../engine/packages/manifest';
import { PackagesRepository } from '../engine/packages/packages-repository';
import { PackageRegistry } from '../engine/packages/registry';
import type { TaskDetector } from '../engine/pipeline/detectors';
import { type DeliveryTarget, type PipelineTask, TaskPipeline } from '../engine/pipeline/task-pipeline';
import type { ClassEntry } from '../engine/rules/schema';
import { compileCheck } from '../engine/schema/ajv';
import { type Db, openDb } from '../engine/store/db';
import { DEFAULT_OSD, type Polygon } from '../engine/tasks/schema';
import type { Detection, Frame } from '../engine/vision/types';
import { BUILTIN_PACKAGE_DIR } from './helpers/fixtures';

/**
 * TaskPipeline with a real package registry on SQLite, real tracking, rules, OSD and JPEG snapshots.
 * Only the frame stream (an EventEmitter standing in for the watchdog) and the model (a detector the
 * test answers for) are stand-ins, so each test decides which frames arrive, when analysis finishes
 * and what it finds.
 */

type Message = Extract<NewEvent, { event: 'message' }>;

const PERSON = '#ff0000';
const entry = (class_id: string, name: string, color: string): ClassEntry => ({
  class_id,
  name,
  color,
  threshold: 0.5,
  min_pixel: 0,
  max_pixel: 0,
});

/** Every sighting fires at once: these scenarios are about frames, not inertia (rules-inertia.test.ts). */
const INSTANT = { hits: 1, frames: 1 };

/** Two weight-free models so that adding and removing apps also adds and removes detectors. */
const MANIFEST: Manifest = {
  format: 1,
  zapk_id: 'unit',
  name: 'Pipeline unit package',
  version: '1.0.0',
  models: {
    objects: {
      family: 'motion',
      labels: ['person', 'car'],
      score_threshold: 0.25,
      nms_iou: 0.5,
      class_agnostic_nms: true,
    },
    things: {
      family: 'motion',
      labels: ['thing'],
      score_threshold: 0.25,
      nms_iou: 0.5,
      class_agnostic_nms: true,
    },
  },
  apps: [
    {
      app_id: 'person',
      name: 'Person',
      type: 1,
      model: 'objects',
      rule: { interval: 0, inertia: INSTANT, classes: [entry('0', 'person', PERSON)] },
      license_expire: 0,
      perpetual: true,
    },
    {
      app_id: 'car',
      name: 'Car',
      type: 1,
      model: 'objects',
      rule: { interval: 0, inertia: INSTANT, classes: [entry('1', 'car', '#0000ff')] },
      license_expire: 0,
      perpetual: true,
    },
    {
      app_id: 'thing',
      name: 'Thing',
      type: 1,
      model: 'things',
      rule: { interval: 0, inertia: INSTANT, classes: [entry('0', 'thing', '#00ff00')] },
      license_expire: 0,
      perpetual: true,
    },
  ],
};

const checkEvent = compileCheck<NewEvent>(NewEvent, 'event');
const checkBody = compileCheck<CallbackBody>(CallbackBody, 'callback');

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(1);
  }
}

const box = (x1: number, y1: number, x2: number, y2: number, classIndex = 0, score = 0.9): Detection => ({
  x1,
  y1,
  x2,
  y2,
  score,
  classIndex,
});

/** The frame's position in the stream, written into its first pixel so the detector can tell frames apart. */
const markerOf = (frame: Frame) =>
  (frame.data[0] as number) | ((frame.data[1] as number) << 8) | ((frame.data[2] as number) << 16);

type Respond = (model: string, marker: number) => Detection[] | Promise<Detection[]>;

let dir: string;
let db: Db;
let packages: PackageRegistry;
let pipelines: TaskPipeline[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-pipeline-'));
  db = openDb(dir);
  packages = new PackageRegistry(new PackagesRepository(db), new ManualClock(), dir, () => false);
  await packages.installDir(BUILTIN_PACKAGE_DIR, true);
  const unit = join(dir, 'unit-package');
  mkdirSync(unit);
  writeFileSync(join(unit, 'manifest.json'), JSON.stringify(MANIFEST));
  await packages.installDir(unit, false);
});

afterEach(() => {
  for (const pipeline of pipelines) pipeline.stop();
  pipelines = [];
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function taskOf(appIds: string[], extra: Partial<PipelineTask> = {}): PipelineTask {
  return {
    task_id: 'task-1',
    zapk_id: 'unit',
    app_ids: appIds,
    app_configs: [],
    rule_overrides: {},
    osd: { ...DEFAULT_OSD },
    business_id: 'gate-3',
    report_url: 'http://127.0.0.1:9/callback',
    polygon_frame: null,
    analysis_fps: 10,
    persistent: false,
    motion_gate: true,
    gate_regions: false,
    ...extra,
  };
}

interface FrameOptions {
  width?: number;
  height?: number;
  synthetic?: boolean;
  /** The source's size the frame was scaled from; the frame's own by default. */
  source?: { width: number; height: number };
  /** Fills the frame; gray 128 by default. */
  paint?: (data: Uint8Array) => void;
  /** The frame's byte length, when not width x height x 3 (a malformed frame). */
  bytes?: number;
  /** When the frame left ffmpeg (performance.now() by default), and its place on that ffmpeg's media clock. */
  receivedAt?: number;
  mediaAt?: number;
  mediaLine?: number;
}

/**
 * A pipeline fed by hand: emit() hands it a frame, step() hands one and waits until it is dealt with.
 * `regions`: its models say they run on crops, as ONNX detectors do, so the motion gate is on.
 */
function harness(task: PipelineTask, now: () => number = () => Date.now(), { regions = false } = {}) {
  const stream = new EventEmitter();
  const enqueued: Array<{ target: DeliveryTarget; event: NewEvent }> = [];
  const detectCalls: Array<{ model: string; marker: number; due?: number }> = [];
  const created: string[] = [];
  const h = {
    stream,
    enqueued,
    detectCalls,
    created,
    emitted: 0,
    /** Per frame marker: how many events were enqueued when the pipeline gave the frame back, per release. */
    released: new Map<number, number[]>(),
    respond: ((): Detection[] => []) as Respond,
    /** What the pool would say: is an inference thread idle? */
    idle: () => false,
    /** What the engine would say: why it is overloaded, or null. */
    overload: (): string | null => null,
    pipeline: undefined as unknown as TaskPipeline,
    messages: () => enqueued.map((e) => e.event as Message),
    /** [app_id, frame id] of every event, in enqueue order. */
    fired: () => enqueued.map((e) => [e.event.app_id, (e.event as Message).data.frame.id] as const),
    emit(options: FrameOptions = {}): number {
      const { width = 320, height = 240, synthetic = false } = options;
      h.emitted += 1;
      const marker = h.emitted;
      const data = new Uint8Array(options.bytes ?? width * height * 3);
      if (synthetic) data.fill(0);
      else if (options.paint) options.paint(data);
      else data.fill(128);
      data[0] = h.emitted & 0xff;
      data[1] = (h.emitted >> 8) & 0xff;
      data[2] = (h.emitted >> 16) & 0xff;
      const frame: WatchdogFrame = {
        data,
        width,
        height,
        source: options.source ?? { width, height },
        synthetic,
        index: h.emitted - 1,
        receivedAt: options.receivedAt ?? performance.now(),
        mediaAt: options.mediaAt,
        mediaLine: options.mediaLine,
        release: () => h.released.set(marker, [...(h.released.get(marker) ?? []), enqueued.length]),
      };
      stream.emit('frame', frame);
      return h.emitted;
    },
    /** Emits one frame and waits until it is analysed or has failed (publishing may still run). */
    async step(options: FrameOptions = {}): Promise<number> {
      const { stats } = h.pipeline;
      const before = stats.analysed + stats.failures;
      const position = h.emit(options);
      await until(`frame ${position} analysed`, () => stats.analysed + stats.failures > before);
      return position;
    },
  };
  h.pipeline = new TaskPipeline(task, stream as unknown as StreamWatchdog, {
    packages,
    sink: { enqueue: (target, event) => enqueued.push({ target, event }) },
    createDetector(app): TaskDetector {
      const model = app.model.key.split('#').pop() ?? '';
      created.push(model);
      return {
        key: app.model.key,
        ...(regions && {
          regions: { input: { width: 416, height: 416 }, nmsIou: 0.45, classAgnostic: false },
        }),
        async detect(frame, due) {
          const marker = markerOf(frame);
          detectCalls.push({ model, marker, due });
          const detections = await h.respond(model, marker);
          return { detections, frame, inferenceMs: 1 };
        },
      };
    },
    inferenceIdle: () => h.idle(),
    overload: () => h.overload(),
    now,
  });
  pipelines.push(h.pipeline);
  return h;
}

/** Waits for `count` events, then a little longer so that an unexpected extra one would show. */
async function eventsSettled(h: ReturnType<typeof harness>, count: number): Promise<void> {
  await until(`${count} events`, () => h.enqueued.length >= count);
  await sleep(150);
}

describe('frames arriving faster than analysis', () => {
  it('drops evenly, keeps one frame in analysis and at most two waiting, always the newest', async () => {
    const h = harness(taskOf(['person']));
    let active = 0;
    let maxActive = 0;
    const pickedUp: Array<{ marker: number; newest: number }> = [];
    h.respond = async (_model, marker) => {
      pickedUp.push({ marker, newest: h.emitted });
      active += 1;
      maxActive = Math.max(maxActive, active);
      await sleep(50);
      active -= 1;
      return [];
    };
    const analysedIds: number[] = [];
    h.pipeline.on('analysed', ({ frameId }) => analysedIds.push(frameId));
    const { stats } = h.pipeline;

    const FRAMES = 100;
    let maxBacklog = 0;
    await new Promise<void>((done) => {
      const timer = setInterval(() => {
        h.emit({ width: 64, height: 48 });
        // In analysis plus waiting: frames neither analysed nor dropped yet.
        maxBacklog = Math.max(maxBacklog, h.emitted - stats.dropped - stats.analysed);
        if (h.emitted === FRAMES) {
          clearInterval(timer);
          done();
        }
      }, 10);
    });
    const backlogAtEnd = FRAMES - stats.dropped - stats.analysed;
    expect(backlogAtEnd).toBeGreaterThanOrEqual(1);
    expect(backlogAtEnd).toBeLessThanOrEqual(3);
    expect(maxBacklog).toBeLessThanOrEqual(3);

    await until('the backlog analysed', () => stats.analysed + stats.dropped === FRAMES);
    await sleep(100);
    expect(stats.analysed + stats.dropped).toBe(FRAMES);
    expect(stats.analysed).toBe(analysedIds.length);
    expect(h.released.size).toBe(FRAMES);
    expect([...h.released.values()].every((releases) => releases.length === 1)).toBe(true);
    expect(stats.failures).toBe(0);
    expect(maxActive).toBe(1);
    // A frame taken up from the waiting ones is always one of the two newest: older ones were displaced.
    expect(pickedUp.filter((p) => p.newest - p.marker > 1)).toEqual([]);
    expect(analysedIds.at(-1)).toBe(FRAMES);
    expect(analysedIds).toEqual([...analysedIds].sort((a, b) => a - b));

    // ~50 ms of analysis per ~10 ms frame: every ~5th frame, evenly, not bursts and long holes.
    expect(analysedIds.length).toBeGreaterThanOrEqual(8);
    expect(stats.dropped).toBeGreaterThan(FRAMES / 2);
    const gaps = analysedIds.slice(1).map((id, i) => id - (analysedIds[i] as number));
    const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)] as number;
    expect(median).toBeGreaterThanOrEqual(2);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(2 * median);
  });
});

describe('a second frame beside the first while a thread is idle', () => {
  it('starts a frame that would be dropped, and tracks and reports both in frame order', async () => {
    const h = harness(taskOf(['person']));
    h.idle = () => true;
    const gates = new Map<number, () => void>();
    h.respond = (_model, marker) =>
      new Promise((done) => gates.set(marker, () => done([box(100 + marker, 60, 140 + marker, 140)])));
    const analysed: Array<{ frameId: number; trackIds: string[] }> = [];
    h.pipeline.on('analysed', ({ frameId, models }) =>
      analysed.push({
        frameId,
        trackIds: [...models.values()].flatMap((m) => m.tracked.map((t) => t.trackId)),
      }),
    );

    h.emit(); // 1: starts
    h.emit(); // 2: waits, as nothing would be dropped
    await until('frame 1 in detection', () => gates.size === 1);
    h.emit(); // 3: rather than drop frame 2, it starts beside frame 1; frame 3 waits
    await until('frames 1 and 2 in detection', () => gates.size === 2);
    expect(h.detectCalls.map((c) => c.marker)).toEqual([1, 2]);
    // Frame 2's result comes first; it waits for frame 1's.
    gates.get(2)?.();
    await sleep(50);
    expect(analysed).toEqual([]);
    gates.get(1)?.();
    await until('frame 3 in detection', () => gates.size === 3);
    expect(analysed.map((a) => a.frameId)).toEqual([1, 2]);

    // No idle thread: two frames wait, and the oldest of them is dropped for a third.
    h.idle = () => false;
    h.emit(); // 4: waits
    h.emit(); // 5: waits
    h.emit(); // 6: displaces frame 4
    await sleep(50);
    expect(h.detectCalls.map((c) => c.marker)).toEqual([1, 2, 3]);
    gates.get(3)?.();
    await until('frame 5 in detection', () => gates.size === 4);
    gates.get(5)?.();
    await until('frame 6 in detection', () => gates.size === 5);
    gates.get(6)?.();
    await eventsSettled(h, 5);

    expect(analysed.map((a) => a.frameId)).toEqual([1, 2, 3, 5, 6]);
    // One walker, one track across the frames detected out of order.
    expect(new Set(analysed.flatMap((a) => a.trackIds)).size).toBe(1);
    expect(h.messages().map((m) => m.data.frame.id)).toEqual([1, 2, 3, 5, 6]);
    expect(h.pipeline.stats).toMatchObject({ analysed: 5, dropped: 1, failures: 0, events: 5 });
    expect([...h.released.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6]);
    expect([...h.released.values()].every((releases) => releases.length === 1)).toBe(true);
  });

  it('frames arriving in a clump behind the one in analysis are all analysed, in order', async () => {
    const h = harness(taskOf(['person']));
    const gates: Array<() => void> = [];
    h.respond = () => new Promise((done) => gates.push(() => done([])));
    h.emit(); // 1: in analysis
    await until('frame 1 in detection', () => gates.length === 1);
    h.emit(); // 2 and 3 arrive together (a network's burst): both wait
    h.emit();
    expect(h.pipeline.stats.dropped).toBe(0);
    for (const marker of [1, 2, 3]) {
      await until(`frame ${marker} in detection`, () => gates.length === 1);
      gates.shift()?.();
    }
    await until('three frames analysed', () => h.pipeline.stats.analysed === 3);
    expect(h.detectCalls.map((c) => c.marker)).toEqual([1, 2, 3]);
    expect(h.pipeline.stats).toMatchObject({ analysed: 3, dropped: 0, failures: 0 });
  });

  it('a frame that waited is sent to the inference queue due when it arrived, not when it was sent', async () => {
    const h = harness(taskOf(['person']));
    const gates = new Map<number, () => void>();
    h.respond = (_model, marker) => new Promise((done) => gates.set(marker, () => done([])));
    const t0 = performance.now() - 1_000;
    h.emit({ receivedAt: t0 });
    h.emit({ receivedAt: t0 + 200 }); // waits behind frame 1
    await until('frame 1 in detection', () => gates.size === 1);
    await sleep(30);
    gates.get(1)?.();
    await until('frame 2 in detection', () => gates.size === 2);
    gates.get(2)?.();
    await until('two frames analysed', () => h.pipeline.stats.analysed === 2);
    expect(h.detectCalls).toEqual([
      { model: 'objects', marker: 1, due: t0 },
      { model: 'objects', marker: 2, due: t0 + 200 },
    ]);
  });

  it('not on an overloaded engine: the displaced frame is shed, one frame at a time', async () => {
    const h = harness(taskOf(['person']));
    h.idle = () => true;
    h.overload = () => "the engine's event loop ran 2.0 s late";
    const gates = new Map<number, () => void>();
    h.respond = (_model, marker) => new Promise((done) => gates.set(marker, () => done([])));
    h.emit(); // 1: starts
    h.emit(); // 2: waits
    await until('frame 1 in detection', () => gates.size === 1);
    h.emit(); // 3: displaces frame 2, which is dropped although a thread looks idle
    await sleep(50);
    expect(h.detectCalls.map((c) => c.marker)).toEqual([1]);
    gates.get(1)?.();
    await until('frame 3 in detection', () => gates.size === 2);
    gates.get(3)?.();
    await until('two frames analysed', () => h.pipeline.stats.analysed === 2);
    expect(h.detectCalls.map((c) => c.marker)).toEqual([1, 3]);
    expect(h.pipeline.stats).toMatchObject({ analysed: 2, dropped: 1, failures: 0 });
  });

  it('a failed second frame is counted and reported without disturbing the first', async () => {
    const h = harness(taskOf(['person']));
    const failed: string[] = [];
    h.pipeline.on('failed', (reason) => failed.push(reason));
    h.idle = () => true;
    const gates = new Map<number, () => void>();
    h.respond = (_model, marker) =>
      marker === 2
        ? Promise.reject(new Error('the model broke on frame 2'))
        : new Promise((done) => gates.set(marker, () => done([box(100, 60, 140, 140)])));
    h.emit();
    h.emit();
    await until('frame 1 in detection', () => gates.size === 1);
    h.emit(); // frame 2 starts and fails at once; its failure is taken up after frame 1
    await until('frame 2 in detection', () => h.detectCalls.length === 2);
    await sleep(50);
    expect(h.pipeline.stats.failures).toBe(0);
    gates.get(1)?.();
    await until('frame 3 in detection', () => gates.size === 2);
    gates.get(3)?.();
    await eventsSettled(h, 2);
    expect(h.pipeline.stats).toMatchObject({
      analysed: 2,
      failures: 1,
      lastError: 'the model broke on frame 2',
    });
    // Once, for the engine log (which throttles it per task).
    expect(failed).toEqual(['the model broke on frame 2']);
    expect(h.messages().map((m) => m.data.frame.id)).toEqual([1, 3]);
    expect([...h.released.keys()].sort()).toEqual([1, 2, 3]);
    expect([...h.released.values()].every((releases) => releases.length === 1)).toBe(true);
  });
});

/**
 * Makes the harness's model answer at once until holdNext(); from then on every call waits until
 * released, in order, as in a stuck inference queue.
 */
function heldModel(h: ReturnType<typeof harness>) {
  const gates: Array<() => void> = [];
  let holding = false;
  h.respond = () => (holding ? new Promise((done) => gates.push(() => done([]))) : []);
  return {
    get held(): number {
      return gates.length;
    },
    release(): void {
      (gates.shift() as () => void)();
    },
    /** Holds the model and emits frames, each dealt with before the next, until one's call is held: its marker. */
    async holdNext(frame: () => FrameOptions): Promise<number> {
      holding = true;
      const { stats } = h.pipeline;
      while (gates.length === 0) {
        h.emit(frame());
        await until(
          'the frame dealt with',
          () => gates.length > 0 || stats.analysed + stats.failures === h.emitted,
        );
      }
      return h.emitted;
    },
  };
}

describe('a resting task (the motion gate)', () => {
  it('passes the frames that need no model while its refresh waits for inference: none dropped, all in order', async () => {
    const h = harness(taskOf(['person'], { analysis_fps: 10 }), undefined, { regions: true });
    const model = heldModel(h);
    const { stats } = h.pipeline;
    // 10 fps on the media clock; a still grey scene: warm-up, then rest REST_AFTER_MS after the start.
    const still = () => ({ mediaAt: h.emitted * 100, mediaLine: 1 });
    while (!h.pipeline.gateHealth().resting) await h.step(still());
    // The next refresh runs into a model that does not answer (a busy inference queue).
    const refreshId = await model.holdNext(still);
    // A second of frames while it waits: the motion stage finds nothing in them, so they pass.
    for (let i = 0; i < 10; i++) h.emit(still());
    await sleep(50);
    expect(stats.dropped).toBe(0);
    expect(stats.analysed).toBe(refreshId - 1);
    expect(h.detectCalls.at(-1)?.marker).toBe(refreshId);
    // The skipped frames gave their buffers back already; only the refresh holds its own.
    expect([...h.released.keys()].sort((a, b) => a - b)).toEqual(
      Array.from({ length: h.emitted }, (_, i) => i + 1).filter((marker) => marker !== refreshId),
    );
    model.release();
    await until('every frame analysed', () => stats.analysed === h.emitted);
    expect(stats).toMatchObject({ dropped: 0, failures: 0 });
    expect(h.detectCalls.at(-1)?.marker).toBe(refreshId);
    expect(h.pipeline.gateHealth().frames_skipped).toBeGreaterThanOrEqual(10);
    expect([...h.released.values()].every((releases) => releases.length === 1)).toBe(true);
    expect(h.released.size).toBe(h.emitted);
  });

  it('a frame the motion stage cannot read fails alone and in its turn, whether started or decided on arrival', async () => {
    const h = harness(taskOf(['person'], { analysis_fps: 10 }), undefined, { regions: true });
    const model = heldModel(h);
    const { stats } = h.pipeline;
    const still = () => ({ mediaAt: h.emitted * 100, mediaLine: 1 });
    const short = () => ({ ...still(), bytes: 320 * 240 });
    await h.step(short());
    expect(stats).toMatchObject({ analysed: 0, failures: 1 });
    while (h.pipeline.gateHealth().frames_skipped === 0) await h.step(still());
    await model.holdNext(still);
    h.emit(short());
    h.emit(still());
    await sleep(50);
    expect(stats.failures).toBe(1);
    model.release();
    await until('every frame dealt with', () => stats.analysed + stats.failures === h.emitted);
    expect(stats).toMatchObject({ failures: 2, dropped: 0 });
    expect(stats.lastError).toMatch(/needs 230400 bytes, has 76800/);
  });

  it('a refresh decided on arrival and then dropped is taken by the next frame', async () => {
    const h = harness(taskOf(['person']), undefined, { regions: true });
    const model = heldModel(h);
    const { stats } = h.pipeline;
    // A frame a second: the next refresh falls due while the last one still waits for its model.
    const still = () => ({ mediaAt: h.emitted * 1000, mediaLine: 1 });
    // Resting and warmed up: it skips frames.
    while (h.pipeline.gateHealth().frames_skipped === 0) await h.step(still());
    const blocked = await model.holdNext(still);
    // Frames pass until one is the refresh: it waits, and the frame after it displaces it.
    while (stats.dropped === 0) {
      h.emit(still());
      await sleep(5);
    }
    const taker = h.emitted;
    expect(taker - blocked).toBeLessThanOrEqual(h.pipeline.gateHealth().refresh_s + 1);
    model.release();
    await until('the taker in detection', () => model.held > 0);
    expect(h.detectCalls.map((call) => call.marker).slice(-2)).toEqual([blocked, taker]);
    model.release();
    await until('every frame dealt with', () => stats.analysed + stats.dropped === h.emitted);
    expect(stats).toMatchObject({ dropped: 1, failures: 0 });
  });
});

describe('frame numbering and black frames', () => {
  it('frame ids count every frame since the start, dropped ones included', async () => {
    const h = harness(taskOf(['person']));
    const gates: Array<() => void> = [];
    h.respond = () => new Promise((done) => gates.push(() => done([box(100, 60, 140, 140)])));
    h.emit(); // 1: analysed
    await until('frame 1 in detection', () => gates.length === 1);
    h.emit(); // 2: waits, then displaced by 4
    h.emit(); // 3: waits, then displaced by 5
    h.emit(); // 4: waits
    h.emit(); // 5: waits
    expect(h.pipeline.stats.dropped).toBe(2);
    gates.shift()?.();
    await until('frame 4 in detection', () => gates.length === 1);
    gates.shift()?.();
    await until('frame 5 in detection', () => gates.length === 1);
    gates.shift()?.();
    await eventsSettled(h, 3);

    expect(h.detectCalls.map((c) => c.marker)).toEqual([1, 4, 5]);
    expect(h.messages().map((m) => m.data.frame)).toEqual([
      { width: 320, height: 240, id: 1 },
      { width: 320, height: 240, id: 4 },
      { width: 320, height: 240, id: 5 },
    ]);
    expect(h.pipeline.stats).toMatchObject({ analysed: 3, dropped: 2, events: 3, failures: 0 });
    // Each frame goes back once: a replaced one at once, an analysed one after its event is out.
    expect(Object.fromEntries(h.released)).toEqual({ 1: [1], 2: [0], 3: [0], 4: [2], 5: [3] });
  });

  it('black frames never reach the detector but take frame ids and age the tracks', async () => {
    const h = harness(taskOf(['person']));
    h.respond = () => [box(100, 60, 140, 140)];
    const analysedIds: number[] = [];
    h.pipeline.on('analysed', ({ frameId }) => analysedIds.push(frameId));

    for (let i = 0; i < 3; i++) await h.step(); // 1-3
    for (let i = 0; i < 5; i++) await h.step({ synthetic: true }); // 4-8: a short outage
    await h.step(); // 9: the same object, its track survived
    for (let i = 0; i < 40; i++) await h.step({ synthetic: true }); // 10-49: longer than a track is kept
    await h.step(); // 50: the same place, but a new track
    await eventsSettled(h, 5);

    expect(h.detectCalls.map((c) => c.marker)).toEqual([1, 2, 3, 9, 50]);
    expect(analysedIds).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(h.pipeline.stats).toMatchObject({ analysed: 50, blackFrames: 45, dropped: 0 });
    const messages = h.messages();
    expect(messages.map((m) => m.data.frame.id)).toEqual([1, 2, 3, 9, 50]);
    const trackIds = messages.map((m) => m.data.rules[0]?.objects[0]?.track_id);
    const first = trackIds[0];
    expect(first).toBeTruthy();
    expect(trackIds.slice(0, 4)).toEqual([first, first, first, first]);
    expect(trackIds[4]).toBeTruthy();
    expect(trackIds[4]).not.toBe(first);
  });
});

describe('rule time across breaks of the source clock (rule-clock.ts)', () => {
  /** Dwell of the one person in every event, each event checked against the callback schema first. */
  function dwells(h: ReturnType<typeof harness>): number[] {
    return h.messages().map((message) => {
      const checked = checkEvent(message);
      expect(checked.ok ? 'valid' : checked.error).toBe('valid');
      return message.data.rules[0]?.objects[0]?.dwell ?? Number.NaN;
    });
  }

  it('a burst that put the media clock ahead, black frames, then a new ffmpeg: dwell never goes back', async () => {
    const h = harness(taskOf(['person']));
    // The person walks in at the end of the burst, where the media clock is furthest ahead.
    h.respond = (_model, marker) => (marker >= 19 ? [box(100, 60, 140, 140)] : []);
    const t0 = performance.now() - 60_000;
    // ffmpeg 1 connects and the server sends 2 s of cached frames at once: 20 frames in 40 ms.
    for (let i = 0; i < 20; i++)
      await h.step({ receivedAt: t0 + i * 2, mediaAt: t0 + i * 100, mediaLine: 1 });
    // The stream is lost: black frames on real time, earlier than the media clock had got to.
    await h.step({ synthetic: true, receivedAt: t0 + 1_040 });
    await h.step({ synthetic: true, receivedAt: t0 + 1_140 });
    // A new ffmpeg (a reconnect or a rate switch): its media clock starts at its first frame's arrival.
    for (let i = 0; i < 5; i++)
      await h.step({ receivedAt: t0 + 1_240 + i * 100, mediaAt: t0 + 1_240 + i * 100, mediaLine: 2 });
    await eventsSettled(h, 7);

    // ffmpeg 1's media steps (0.1 s a frame, burst or not); across the break real time's: 1.002 s to
    // the first black frame, then 0.1 s each; then ffmpeg 2's media steps.
    expect(dwells(h)).toEqual([0, 0.1, 1.3, 1.4, 1.5, 1.6, 1.7]);
  });

  it("counts each break of the source's clock, and when the last was, for the task's health", async () => {
    const h = harness(taskOf(['person']));
    h.respond = () => [box(100, 60, 140, 140)];
    const breaks: number[] = [];
    h.pipeline.on('clockBreak', (at) => breaks.push(at));
    const t0 = performance.now() - 60_000;
    // The camera restarts twice on one ffmpeg: its timestamps start over each time.
    const media = [0, 100, 200, 0, 100, 200, 0, 100];
    for (const [i, mediaAt] of media.entries())
      await h.step({ receivedAt: t0 + i * 100, mediaAt: t0 + mediaAt, mediaLine: 1 });
    await eventsSettled(h, media.length);
    expect(h.pipeline.stats.clockBreaks).toBe(2);
    expect(breaks).toHaveLength(2);
    expect(h.pipeline.stats.lastClockBreakAt).toBe(breaks[1]);
    // Every alarm kept, none refused for a duration below 0.
    expect(dwells(h)).toHaveLength(media.length);
  });

  it("the machine's wall clock stepped back an hour mid-stream: rules go on, events keep their wall time", async () => {
    let wallOffset = 0;
    const h = harness(taskOf(['person']), () => Date.now() + wallOffset);
    h.respond = () => [box(100, 60, 140, 140)];
    const t0 = performance.now() - 60_000;
    for (let i = 0; i < 10; i++) {
      if (i === 5) wallOffset = -3_600_000; // NTP or the operator set the clock back
      await h.step({ receivedAt: t0 + i * 100, mediaAt: t0 + i * 100, mediaLine: 1 });
    }
    await eventsSettled(h, 10);

    expect(dwells(h)).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
    const stamps = h.messages().map((m) => m.timestamp);
    expect((stamps[4] as number) - (stamps[5] as number)).toBeGreaterThan(3_500_000);
  });
});

describe('live changes', () => {
  const LEFT: Polygon = [
    [0, 0],
    [160, 0],
    [160, 240],
    [0, 240],
  ];
  const RIGHT: Polygon = [
    [160, 0],
    [320, 0],
    [320, 240],
    [160, 240],
  ];

  it('a new polygon through update() applies to the very next analysed frame', async () => {
    const task = taskOf(['person'], { app_configs: [{ app_id: 'person', polygon: LEFT }] });
    const h = harness(task);
    // Foot point (220, 180): in the right half only.
    h.respond = () => [box(200, 100, 240, 180)];
    await h.step(); // 1
    await h.step(); // 2
    h.pipeline.update({ ...task, app_configs: [{ app_id: 'person', polygon: RIGHT }] });
    await h.step(); // 3
    await h.step(); // 4
    await eventsSettled(h, 2);

    expect(h.fired()).toEqual([
      ['person', 3],
      ['person', 4],
    ]);
    const object = h.messages()[0]?.data.rules[0]?.objects[0];
    expect(object).toMatchObject({ x: 220, y: 140, w: 40, h: 80, score: 0.9, class_id: '0', name: 'person' });
    expect(h.enqueued[0]?.target).toEqual({
      task_id: 'task-1',
      report_url: 'http://127.0.0.1:9/callback',
      report_secret: undefined,
    });
  });

  it('osd changes reach the next snapshot: display_box false leaves no box border', async () => {
    const task = taskOf(['person'], { osd: { ...DEFAULT_OSD, border_size: 4 } });
    const h = harness(task);
    const [x1, y1, x2, y2] = [100, 80, 220, 200];
    h.respond = () => [box(x1, y1, x2, y2)];
    await h.step(); // 1: boxes shown
    h.pipeline.update({ ...task, osd: { ...task.osd, display_box: false } });
    await h.step(); // 2: boxes hidden
    await eventsSettled(h, 2);
    expect(h.fired()).toEqual([
      ['person', 1],
      ['person', 2],
    ]);

    const redIn = async (message: Message | undefined, rows: [number, number], cols: [number, number]) => {
      const jpeg = Buffer.from(message?.data.rules[0]?.image ?? '', 'base64');
      const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height, info.channels]).toEqual([320, 240, 3]);
      let red = 0;
      for (let y = rows[0]; y < rows[1]; y++) {
        for (let x = cols[0]; x < cols[1]; x++) {
          const p = (y * info.width + x) * 3;
          if ((data[p] as number) > 190 && (data[p + 1] as number) < 80 && (data[p + 2] as number) < 80)
            red++;
        }
      }
      return red;
    };
    const [shown, hidden] = h.messages();
    // The bottom edge of the box (4 px thick) and its left and right edges below the label.
    const bottom: [[number, number], [number, number]] = [
      [y2 - 4, y2],
      [x1 + 4, x2 - 4],
    ];
    const left: [[number, number], [number, number]] = [
      [y1 + 20, y2],
      [x1, x1 + 4],
    ];
    const right: [[number, number], [number, number]] = [
      [y1 + 20, y2],
      [x2 - 4, x2],
    ];
    const edgePixels = 4 * (x2 - x1 - 8);
    expect(await redIn(shown, ...bottom)).toBeGreaterThan(edgePixels * 0.8);
    expect(await redIn(shown, ...left)).toBeGreaterThan(4 * (y2 - y1 - 20) * 0.8);
    expect(await redIn(hidden, ...bottom)).toBe(0);
    expect(await redIn(hidden, ...left)).toBe(0);
    expect(await redIn(hidden, ...right)).toBe(0);
    // The name tag above the box is still drawn in the class colour: only the box went.
    expect(await redIn(hidden, [y1 - 20, y1], [x1, x1 + 40])).toBeGreaterThan(100);
  });

  it('app_ids changes: a removed app stops on the next frame, an added one starts', async () => {
    const task = taskOf(['person']);
    const h = harness(task);
    h.respond = (model) =>
      model === 'objects'
        ? [box(20, 20, 60, 100, 0), box(200, 20, 260, 60, 1)]
        : [box(120, 120, 160, 200, 0)];
    await h.step(); // 1
    h.pipeline.update({ ...task, app_ids: ['car', 'thing'] });
    await h.step(); // 2
    h.pipeline.update({ ...task, app_ids: ['person'] });
    await h.step(); // 3
    await eventsSettled(h, 4);

    const fired = h.fired().map(([app, frame]) => `${app}@${frame}`);
    expect(fired.slice(0, 1)).toEqual(['person@1']);
    expect(fired.slice(1, 3).sort()).toEqual(['car@2', 'thing@2']);
    expect(fired.slice(3)).toEqual(['person@3']);
    const byApp = Object.fromEntries(
      h.messages().map((m) => [`${m.app_id}@${m.data.frame.id}`, m.data.rules.map((r) => r.id)]),
    );
    expect(byApp).toEqual({
      'person@1': ['person:0'],
      'car@2': ['car:1'],
      'thing@2': ['thing:0'],
      'person@3': ['person:0'],
    });
    // The model of a removed app is not run any more; one still in use keeps its detector.
    expect(h.detectCalls.map((c) => `${c.model}@${c.marker}`).sort()).toEqual(
      ['objects@1', 'objects@2', 'objects@3', 'things@2'].sort(),
    );
    expect(h.created.sort()).toEqual(['objects', 'things']);
  });

  it('a rule edit in the package registry is picked up without update()', async () => {
    const h = harness(taskOf(['person']));
    h.respond = () => [box(100, 60, 140, 140, 0, 0.9)];
    await h.step(); // 1: 0.9 >= 0.5
    packages.updateApp('unit', 'person', {
      rule: { classes: [{ ...entry('0', 'person', PERSON), threshold: 0.95 }] },
    });
    await h.step(); // 2: 0.9 < 0.95
    await h.step(); // 3
    packages.updateApp('unit', 'person', { rule: { classes: [entry('0', 'person', PERSON)] } });
    await h.step(); // 4
    await eventsSettled(h, 2);
    expect(h.fired()).toEqual([
      ['person', 1],
      ['person', 4],
    ]);
  });
});

describe('polygon rescale', () => {
  // Drawn on 768x576; on 384x288 frames it is x 50..150, y 50..130.
  const DRAWN: Polygon = [
    [100, 100],
    [300, 100],
    [300, 260],
    [100, 260],
  ];

  it('evaluates the polygon scaled from polygon_frame to the frame size, after changes and size changes', async () => {
    const task = taskOf(['person'], {
      app_configs: [{ app_id: 'person', polygon: DRAWN }],
      polygon_frame: { width: 768, height: 576 },
    });
    const h = harness(task);
    let width = 384;
    h.respond = () =>
      width === 384
        ? [
            // Foot (80, 90): inside the scaled polygon only.
            box(70, 40, 90, 90),
            // Foot (250, 200): inside the polygon as drawn, outside the scaled one.
            box(240, 150, 260, 200),
          ]
        : [
            // On a 768x576 frame: foot (160, 180) inside the polygon as drawn.
            box(150, 120, 170, 180),
            // Foot (120, 90): would be inside had the polygon stayed scaled for 384x288.
            box(110, 40, 130, 90),
          ];
    await h.step({ width: 384, height: 288 }); // 1
    width = 768;
    await h.step({ width: 768, height: 576 }); // 2
    width = 384;
    await h.step({ width: 384, height: 288 }); // 3
    // A live change rebuilds the app's zone: it must still be scaled from polygon_frame.
    h.pipeline.update({ ...task, osd: { ...task.osd, display_track: false } });
    await h.step({ width: 384, height: 288 }); // 4
    await eventsSettled(h, 4);
    const feet = h
      .messages()
      .map((m) => [m.data.frame, m.data.rules[0]?.objects.map((o) => [o.x, o.y + o.h / 2])]);
    expect(feet).toEqual([
      [{ width: 384, height: 288, id: 1 }, [[80, 90]]],
      [{ width: 768, height: 576, id: 2 }, [[160, 180]]],
      [{ width: 384, height: 288, id: 3 }, [[80, 90]]],
      [{ width: 384, height: 288, id: 4 }, [[80, 90]]],
    ]);
  });

  it('applies zones and masks scaled from polygon_frame like the polygon', async () => {
    const task = taskOf(['person'], {
      app_configs: [
        {
          app_id: 'person',
          polygon: [],
          zones: [{ name: 'drawn', polygon: DRAWN }],
          masks: [
            [
              [400, 0],
              [768, 0],
              [768, 576],
              [400, 576],
            ],
          ],
        },
      ],
      polygon_frame: { width: 768, height: 576 },
    });
    const h = harness(task);
    // On 384x288: foot (80, 90) in the scaled zone, (150, 200) in no zone, (250, 200) in the scaled mask.
    h.respond = () => [box(70, 40, 90, 90), box(140, 150, 160, 200), box(240, 150, 260, 200)];
    await h.step({ width: 384, height: 288 });
    await eventsSettled(h, 1);
    expect(h.messages()[0]?.data.rules[0]?.objects.map((o) => [o.x, o.y + o.h / 2, o.zones])).toEqual([
      [80, 90, ['drawn']],
      [150, 200, []],
    ]);
    // The snapshot shows the mask shaded (grey 128 frame: darker inside it, as it was outside).
    const image = h.messages()[0]?.data.rules[0]?.image ?? '';
    const { data, info } = await sharp(Buffer.from(image, 'base64'))
      .raw()
      .toBuffer({ resolveWithObject: true });
    const grey = (x: number, y: number) => data[(y * info.width + x) * info.channels] as number;
    expect(grey(300, 250)).toBeLessThan(90);
    expect(grey(150, 250)).toBeGreaterThan(115);
  });

  it('without polygon_frame the polygon is taken as drawn on the current frame', async () => {
    const h = harness(taskOf(['person'], { app_configs: [{ app_id: 'person', polygon: DRAWN }] }));
    h.respond = () => [box(70, 40, 90, 90), box(240, 150, 260, 200)];
    await h.step({ width: 384, height: 288 });
    await eventsSettled(h, 1);
    expect(h.messages()[0]?.data.rules[0]?.objects.map((o) => [o.x, o.y + o.h / 2])).toEqual([[250, 200]]);
  });
});

describe('frames scaled down from their source', () => {
  it('maps the boxes back to source pixels once: rules, polygons and events are in them, snapshots on the frame', async () => {
    const task = taskOf(['person'], {
      app_configs: [
        {
          app_id: 'person',
          polygon: [
            [100, 100],
            [300, 100],
            [300, 260],
            [100, 260],
          ],
        },
      ],
      polygon_frame: { width: 768, height: 576 },
    });
    const h = harness(task);
    // In the frame's pixels (half the source's): feet at (80, 90) and (250, 200) on the frame.
    h.respond = () => [box(70, 40, 90, 90), box(240, 150, 260, 200)];
    await h.step({ width: 384, height: 288, source: { width: 768, height: 576 } });
    await eventsSettled(h, 1);
    const message = h.messages()[0];
    expect(message?.data.frame).toEqual({ width: 768, height: 576, id: 1 });
    // Only the first stands in the polygon, which is in source pixels: at (160, 180) there.
    expect(message?.data.rules[0]?.objects.map((o) => [o.x, o.y, o.w, o.h])).toEqual([[160, 130, 40, 100]]);
    const image = Buffer.from(message?.data.rules[0]?.image ?? '', 'base64');
    const { width, height } = await sharp(image).metadata();
    expect([width, height]).toEqual([384, 288]);
  });
});

describe('publishing', () => {
  it('enqueues events in frame order while snapshots of different cost are drawn, in the callback shape', async () => {
    const h = harness(taskOf(['person'], { report_secret: 'a-secret-of-16-chars' }));
    h.respond = () => [box(10, 10, 40, 44)];
    // Large noisy frames make slow JPEGs, tiny ones fast: out-of-order drawing would show.
    const noisy = (data: Uint8Array) => {
      let state = 12345;
      for (let i = 0; i < data.length; i++) {
        state = (state * 1103515245 + 12345) >>> 0;
        data[i] = state >>> 24;
      }
    };
    const sizes: Array<[number, number]> = [];
    for (let i = 0; i < 8; i++) {
      const [width, height] = i % 2 === 0 ? [1280, 720] : [64, 48];
      sizes.push([width, height]);
      await h.step({ width, height, paint: i % 2 === 0 ? noisy : undefined });
    }
    await eventsSettled(h, 8);

    const messages = h.messages();
    expect(messages.map((m) => m.data.frame.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const [i, message] of messages.entries()) {
      const checked = checkEvent(message);
      expect(checked.ok ? 'valid' : checked.error).toBe('valid');
      // As the outbox stores it: seq in enqueue order.
      const body = checkBody({ ...message, event_id: randomUUID(), seq: i + 1 });
      expect(body.ok ? 'valid' : body.error).toBe('valid');
      expect(message).toMatchObject({
        event: 'message',
        task_id: 'task-1',
        app_id: 'person',
        business_id: 'gate-3',
      });
      const meta = await sharp(Buffer.from(message.data.rules[0]?.image ?? '', 'base64')).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', ...(sizes[i] as [number, number])]);
    }
    expect(h.enqueued.every((e) => e.target.report_secret === 'a-secret-of-16-chars')).toBe(true);
  });

  it('a detector failure on one frame is counted and later frames are analysed', async () => {
    const h = harness(taskOf(['person']));
    h.respond = (_model, marker) => {
      if (marker === 3) throw new Error('model exploded on frame 3');
      return [box(100, 60, 140, 140)];
    };
    for (let i = 0; i < 5; i++) await h.step();
    await eventsSettled(h, 4);
    expect(h.pipeline.stats).toMatchObject({
      analysed: 4,
      failures: 1,
      lastError: 'model exploded on frame 3',
      events: 4,
    });
    expect(h.fired()).toEqual([
      ['person', 1],
      ['person', 2],
      ['person', 4],
      ['person', 5],
    ]);
  });
});
