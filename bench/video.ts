import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { buildZapk } from '../engine/packages/zapk';
import { cpuSeconds, engineChildren, rssBytes } from '../engine/system/process-stats';
import { terminate } from '../test/helpers/child';
import { FIXTURES } from '../test/helpers/engine';
import { callApi, signIn, spawnEngine } from '../test/helpers/engine-process';
import { Receiver } from '../test/helpers/receiver';
import { encodedFixture, RtmpSource } from '../test/helpers/rtmp-source';
import { LIVE_WARMUP_S } from './live-decoders';
import { percentile } from './percentile';
import { STILL_PERIOD_S, sceneCamera, sinceEntryS } from './scenes';

/**
 * Video analysis throughput and latency against the raw onnxruntime ceiling of the same model on the
 * same machine in the same run. The engine runs in its own process, as deployed; each stream is a
 * live RTMP camera (ffmpeg serving the fixture video) with a person task firing on every frame, so
 * every analysed frame with a person yields a callback whose latency is measured at the receiver.
 */

export const MODEL = join(FIXTURES, 'models', 'yolox_nano.onnx');
export const EXAMPLE = resolve(import.meta.dirname, '../examples/coco-yolox-nano/manifest.json');
const PASSWORD = 'bench-admin-password';
const RAW_SECONDS = Number(process.env.BENCH_RAW_S ?? 5);
const WINDOW_SECONDS = Number(process.env.BENCH_WINDOW_S ?? 20);
/** Crossings of the still scene the motion-to-event rows wait for, per camera. */
const CROSSINGS = Number(process.env.BENCH_CROSSINGS ?? 3);
const FRAMES = 795;

export interface Ceiling {
  config: string;
  'inferences/s': number;
  'median ms': number;
}

/** session.run alone, on one letterboxed-size tensor, for a few seconds. */
async function rawSequential(): Promise<Ceiling> {
  const session = await ort.InferenceSession.create(MODEL, { graphOptimizationLevel: 'all' });
  const input = new ort.Tensor('float32', new Float32Array(3 * 416 * 416).fill(114), [1, 3, 416, 416]);
  for (let i = 0; i < 5; i++) await session.run({ images: input });
  const times: number[] = [];
  const until = performance.now() + RAW_SECONDS * 1000;
  while (performance.now() < until) {
    const start = performance.now();
    await session.run({ images: input });
    times.push(performance.now() - start);
  }
  await session.release();
  return {
    config: '1 session, default threads',
    'inferences/s': round(times.length / RAW_SECONDS),
    'median ms': round(percentile(times, 50)),
  };
}

/**
 * Worker-thread code that defines warmSession(): one single-threaded session on workerData.model,
 * run five times on a letterboxed-size input, as the engine's inference hosts run it.
 */
export const WARM_SESSION = `
  const { parentPort, workerData } = require('node:worker_threads');
  const ort = require('onnxruntime-node');
  async function warmSession() {
    const session = await ort.InferenceSession.create(workerData.model, {
      intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
    const input = new ort.Tensor('float32', new Float32Array(3 * 416 * 416).fill(114), [1, 3, 416, 416]);
    for (let i = 0; i < 5; i++) await session.run({ images: input });
    return { session, input };
  }`;

/** One single-threaded session per core, each in its own thread: the layout the engine's pool uses. */
export async function rawParallel(threads: number): Promise<Ceiling> {
  const code = `${WARM_SESSION}
    (async () => {
      const { session, input } = await warmSession();
      parentPort.postMessage('ready');
      parentPort.once('message', async (until) => {
        const times = [];
        while (Date.now() < until) {
          const start = performance.now();
          await session.run({ images: input });
          times.push(performance.now() - start);
        }
        parentPort.postMessage(times);
      });
    })();`;
  const workers = Array.from(
    { length: threads },
    () => new Worker(code, { eval: true, workerData: { model: MODEL } }),
  );
  await Promise.all(workers.map((w) => new Promise((done) => w.once('message', done))));
  const until = Date.now() + RAW_SECONDS * 1000;
  const results = await Promise.all(
    workers.map(
      (w) =>
        new Promise<number[]>((done) => {
          w.once('message', done);
          w.postMessage(until);
        }),
    ),
  );
  await Promise.all(workers.map((w) => w.terminate()));
  const times = results.flat();
  return {
    config: `${threads} sessions x 1 thread, parallel`,
    'inferences/s': round(times.length / RAW_SECONDS),
    'median ms': round(percentile(times, 50)),
  };
}

interface Row {
  scenario: string;
  'offered fps': number;
  'analysed fps': number;
  'per stream': string;
  '% of ceiling': number;
  'engine CPU %': number;
  'ffmpeg CPU %': number;
  'RSS MB': number;
  'latency p50 ms': number;
  'latency p95 ms': number;
  callbacks: number;
}

async function scenario(
  streams: number,
  speed: number,
  interval: number,
  ceiling: number,
  engine: EngineUnderTest,
  receiver: Receiver,
): Promise<Row> {
  const api = <T>(method: string, path: string, body?: unknown) =>
    callApi<T>(engine.url, engine.token, method, path, body);
  await api('PUT', '/api/zapk/coco-yolox-nano/app/person', { rule: { interval } });
  const sources = await Promise.all(
    Array.from({ length: streams }, (_, i) =>
      RtmpSource.create(`bench-${streams}-${speed}-${i}`, FRAMES, speed),
    ),
  );
  return withPersonTasks(engine, sources, { report_url: receiver.url }, async (taskIds) => {
    const analysed = async () => {
      const listed = await api<Array<{ task_id: string; dump: string }>>('GET', '/api/tasks');
      return taskIds.map((id) => {
        const dump = listed.find((task) => task.task_id === id)?.dump ?? '';
        return Number(/(\d+) frames analysed/.exec(dump)?.[1] ?? Number.NaN);
      });
    };
    await new Promise((done) => setTimeout(done, LIVE_WARMUP_S * 1000));
    const { hosts, ffmpegs } = engineChildren(engine.pid);
    // The engine's own work: its process and its inference hosts.
    const own = [engine.pid, ...hosts];
    const before = await analysed();
    const cpuBefore = own.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const ffmpegBefore = ffmpegs.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const windowStart = Date.now();
    const firstRequest = receiver.requests.length;
    let rss = 0;
    const until = Date.now() + WINDOW_SECONDS * 1000;
    while (Date.now() < until) {
      rss = Math.max(
        rss,
        own.reduce((sum, pid) => sum + rssBytes(pid) / 2 ** 20, 0),
      );
      await new Promise((done) => setTimeout(done, 1_000));
    }
    const seconds = (Date.now() - windowStart) / 1000;
    const after = await analysed();
    const cpu = (own.reduce((sum, pid) => sum + cpuSeconds(pid), 0) - cpuBefore) / seconds;
    const ffmpegCpu = (ffmpegs.reduce((sum, pid) => sum + cpuSeconds(pid), 0) - ffmpegBefore) / seconds;
    const perStream = after.map((n, i) => (n - (before[i] ?? 0)) / seconds);
    const total = perStream.reduce((sum, fps) => sum + fps, 0);
    const latencies = receiver.requests
      .slice(firstRequest)
      .filter((r) => r.body?.event === 'message')
      .map((r) => r.receivedAt - (r.body?.timestamp ?? 0));
    return {
      scenario: `${streams} x ${speed * 10} fps camera, interval ${interval} s`,
      'offered fps': streams * speed * 10,
      'analysed fps': round(total),
      'per stream': perStream.map((fps) => fps.toFixed(1)).join(' / '),
      '% of ceiling': round((100 * total) / ceiling),
      'engine CPU %': Math.round(cpu * 100),
      'ffmpeg CPU %': Math.round(ffmpegCpu * 100),
      'RSS MB': Math.round(rss),
      'latency p50 ms': Math.round(percentile(latencies, 50)),
      'latency p95 ms': Math.round(percentile(latencies, 95)),
      callbacks: latencies.length,
    };
  });
}

/**
 * Starts each camera with a person task of the example package on it (`task` adds to the start
 * body, the same for each camera or a camera's own), runs `measure` with the task ids, then closes
 * the tasks and the cameras. The tasks are closed (and checked) before their cameras go: a task left
 * behind would fill black frames through the next scenario while it waits out its reconnects.
 */
export async function withPersonTasks<T>(
  engine: EngineUnderTest,
  cameras: LiveCamera[],
  task: Record<string, unknown> | ((camera: number) => Record<string, unknown>),
  measure: (taskIds: string[]) => Promise<T>,
): Promise<T> {
  const api = <R>(method: string, path: string, body?: unknown) =>
    callApi<R>(engine.url, engine.token, method, path, body);
  const taskIds: string[] = [];
  try {
    for (const [i, camera] of cameras.entries()) {
      camera.start();
      const started = await api<{ task_id: string }>('POST', '/api/task', {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['person'],
        video_url: camera.url,
        ...(typeof task === 'function' ? task(i) : task),
      });
      taskIds.push(started.task_id);
    }
    return await measure(taskIds);
  } finally {
    try {
      for (const id of taskIds) await api('DELETE', `/api/task/${id}`);
    } finally {
      await Promise.all(cameras.map((camera) => camera.kill()));
    }
  }
}

/** A live camera served to the engine: an RtmpSource, or one that serves many clients (relayed-camera.ts). */
export interface LiveCamera {
  readonly url: string;
  start(): void;
  kill(): Promise<void>;
}

export interface EngineUnderTest {
  url: string;
  pid: number;
  token: string;
  /** Stops the engine and waits for it to exit (its data folder may then be removed). */
  stop(): Promise<void>;
}

/** An engine in its own process with the example package installed. */
export async function engineWith(work: string, name: string, args: string[]): Promise<EngineUnderTest> {
  const engine = await spawnEngine(join(work, name), PASSWORD, args);
  const token = await signIn(engine.url, PASSWORD);
  const form = new FormData();
  form.append('file', new Blob([readFileSync(join(work, 'example.zapk'))]), 'example.zapk');
  const answer = await fetch(`${engine.url}/api/zapk`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  if (((await answer.json()) as { code: number }).code !== 0)
    throw new Error('the example package did not install');
  return {
    url: engine.url,
    pid: engine.child.pid as number,
    token,
    stop: () => terminate(engine.child),
  };
}

interface MotionRow {
  motion_gate: boolean;
  crossings: number;
  /** Media time from the person's first pixels in the scene to the frame of its first event. */
  'motion to event frame ms': number;
  'max ms': number;
  /** From that frame leaving ffmpeg to its callback arriving. */
  'delivery p50 ms': number;
  'motion to callback ms': number;
  'vs gate off ms': number;
  'frame interval ms': number;
}

/** A person task's message callbacks this long after the previous one start a new crossing. */
const CROSSING_GAP_MS = 10_000;

/**
 * Latency from motion to the first event, with the gate on and off: two cameras of the still scene
 * (scenes.ts: one person crossing every STILL_PERIOD_S, so a gated camera rests in between), one
 * task each, side by side in one window of BENCH_CROSSINGS crossings. A crossing's first callback
 * tells how far the person had come (its box's right edge) and so how long after it began to enter
 * the frame was; its delivery is the callback's arrival less the frame's timestamp.
 */
export async function motionToEvent(engine: EngineUnderTest, receiver: Receiver): Promise<MotionRow[]> {
  const api = <T>(method: string, path: string, body?: unknown) =>
    callApi<T>(engine.url, engine.token, method, path, body);
  await api('PUT', '/api/zapk/coco-yolox-nano/app/person', { rule: { interval: 0 } });
  const file = await sceneCamera('still');
  const gates = [false, true];
  const cameras = await Promise.all(gates.map((gate) => RtmpSource.serving(`motion-gate-${gate}`, file)));
  return withPersonTasks(
    engine,
    cameras,
    (i) => ({ report_url: receiver.url, motion_gate: gates[i] }),
    async (taskIds) => {
      const from = Date.now() + LIVE_WARMUP_S * 1000;
      await new Promise((done) => setTimeout(done, (LIVE_WARMUP_S + CROSSINGS * STILL_PERIOD_S) * 1000));
      const listed = await api<Array<{ task_id: string; analysis_fps: number }>>('GET', '/api/tasks');
      const rows = taskIds.map((id, i) => {
        const messages = receiver.requests.filter((r) => r.task_id === id && r.body?.event === 'message');
        const firsts = messages.filter(
          (r, k) =>
            r.receivedAt >= from &&
            (k === 0 || r.receivedAt - (messages[k - 1]?.receivedAt ?? 0) > CROSSING_GAP_MS),
        );
        const sinceEntry = firsts.map((r) => {
          const objects =
            (r.body?.data as { rules?: { objects: { x: number; w?: number }[] }[] } | undefined)?.rules ?? [];
          const right = Math.max(...objects.flatMap((rule) => rule.objects.map((o) => o.x + (o.w ?? 0) / 2)));
          return sinceEntryS(right) * 1000;
        });
        const delivery = percentile(
          firsts.map((r) => r.receivedAt - (r.body?.timestamp ?? 0)),
          50,
        );
        const mean = sinceEntry.reduce((sum, ms) => sum + ms, 0) / Math.max(1, sinceEntry.length);
        const fps = listed.find((task) => task.task_id === id)?.analysis_fps ?? 0;
        return {
          motion_gate: gates[i] as boolean,
          crossings: firsts.length,
          'motion to event frame ms': Math.round(mean),
          'max ms': Math.round(Math.max(...sinceEntry)),
          'delivery p50 ms': Math.round(delivery),
          'motion to callback ms': Math.round(mean + delivery),
          'vs gate off ms': 0,
          'frame interval ms': fps ? Math.round(1000 / fps) : Number.NaN,
        };
      });
      const off = rows.find((row) => !row.motion_gate)?.['motion to callback ms'] ?? 0;
      for (const row of rows) row['vs gate off ms'] = row['motion to callback ms'] - off;
      return rows;
    },
  );
}

export async function benchVideo(): Promise<{ ceiling: Ceiling[]; pipeline: Row[]; motion: MotionRow[] }> {
  encodedFixture(FRAMES);
  encodedFixture(FRAMES, 4);
  const ceilingRows = [await rawSequential(), await rawParallel(availableParallelism())];
  const ceiling = Math.max(...ceilingRows.map((row) => row['inferences/s']));

  const work = mkdtempSync(join(tmpdir(), 'vc-bench-video-'));
  await buildZapk(EXAMPLE, join(work, 'example.zapk'));
  const receiver = await Receiver.start({ keepBodies: true });
  const rows: Row[] = [];
  let motion: MotionRow[] = [];
  try {
    // As shipped (analysis capped at 10 fps per stream). Real-time cameras with interval 0: every
    // analysed frame with a person fires, so each is a latency sample and gets a snapshot drawn
    // (the heaviest rule setting); then 40 fps cameras, which the cap brings down to 10 fps.
    const shipped = await engineWith(work, 'shipped', []);
    try {
      for (const [streams, speed, interval] of [
        [1, 1, 0],
        [2, 1, 0],
        [4, 1, 0],
        [4, 4, 5],
      ] as const) {
        rows.push(await scenario(streams, speed, interval, ceiling, shipped, receiver));
      }
      motion = await motionToEvent(shipped, receiver);
    } finally {
      await shipped.stop();
    }
    // Uncapped (--analysis-fps 40): more frames than the cores can analyse, so the engine drops
    // evenly per stream; throughput against the inference ceiling, as deployed (5 s interval).
    const uncapped = await engineWith(work, 'uncapped', ['--analysis-fps', '40']);
    try {
      for (const streams of [1, 2, 4]) rows.push(await scenario(streams, 4, 5, ceiling, uncapped, receiver));
    } finally {
      await uncapped.stop();
    }
    return { ceiling: ceilingRows, pipeline: rows, motion };
  } finally {
    await receiver.close();
    rmSync(work, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

if (import.meta.url === `file://${process.argv[1]}`) {
  const { ceiling, pipeline, motion } = await benchVideo();
  console.log('== raw onnxruntime ceiling (yolox_nano 416x416, CPU) ==');
  console.table(ceiling);
  console.log('== engine: RTMP streams -> ffmpeg -> ONNX -> tracking -> rules -> OSD -> callback ==');
  console.table(pipeline);
  console.log(
    '== motion to the first event, gate on and off: a person entering a still 1080p scene (1 camera each, side by side) ==',
  );
  console.table(motion);
}
