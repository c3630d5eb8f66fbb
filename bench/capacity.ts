import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildZapk } from '../engine/packages/zapk';
import { cpuSeconds, engineChildren } from '../engine/system/process-stats';
import { callApi } from '../test/helpers/engine-process';
import { RtmpSource } from '../test/helpers/rtmp-source';
import { contendedBound } from './contended-bound';
import { camera1080p, decodeCost } from './decode';
import { liveDecodeCost } from './live-decoders';
import { type EngineUnderTest, engineWith, rawParallel, withPersonTasks } from './video';

/**
 * How many real cameras one machine analyses: N cameras of 1080p25 H.264 (the fixture video made
 * into one, served live over RTMP), each analysed at 5 fps, against the bound of the same run: what
 * decoding N such streams to nothing costs (ffmpeg alone, live-decoders.ts) plus N x 5 inferences at
 * the measured single-thread cost. The file bound, with the file decoded flat out instead (cheaper
 * than any live stream), is kept beside it as earlier runs reported it. A camera
 * is held when it is analysed at >= 95% of its rate with no frame dropped. Each row also runs the
 * bound's work all at once without the engine (contended-bound.ts), once the engine's tasks are gone;
 * the summary adds how many cameras that contended work keeps on its own, past the engine's rows too.
 */

const EXAMPLE = resolve(import.meta.dirname, '../examples/coco-yolox-nano/manifest.json');
const RATE = 5;
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 10);
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 20);
interface Row {
  cameras: number;
  'slowest fps': number;
  drops: number;
  held: string;
  'engine CPU %': number;
  'ffmpeg CPU %': number;
  'bound CPU %': number;
  'CPU / bound': number;
  'CPU / file bound': number;
  'contended bound CPU %': number;
  /** Inferences a second the contended bound kept, of N x 5 asked. */
  'contended inf/s': number;
  'CPU / contended': number;
}

interface Measured {
  cameras: number;
  slowest: number;
  drops: number;
  /** Cores of the engine and its inference hosts. */
  engineCpu: number;
  /** Cores of the engine's ffmpeg processes. */
  ffmpegCpu: number;
}

/** N cameras analysed by the engine, measured over the window once warm; the tasks end after. */
async function measure(engine: EngineUnderTest, file: string, cameras: number): Promise<Measured> {
  const api = <T>(method: string, path: string, body?: unknown) =>
    callApi<T>(engine.url, engine.token, method, path, body);
  const sources = await Promise.all(
    Array.from({ length: cameras }, (_, i) => RtmpSource.serving(`capacity-${cameras}-${i}`, file)),
  );
  return withPersonTasks(engine, sources, {}, async (taskIds) => {
    const counts = async () => {
      const listed = await api<
        Array<{ task_id: string; health: { frames_analysed: number; frames_dropped: number } }>
      >('GET', '/api/tasks');
      return taskIds.map(
        (id) =>
          listed.find((task) => task.task_id === id)?.health ?? { frames_analysed: 0, frames_dropped: 0 },
      );
    };
    await new Promise((done) => setTimeout(done, WARMUP_S * 1000));
    const { hosts, ffmpegs } = engineChildren(engine.pid);
    const own = [engine.pid, ...hosts];
    const cpu = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const before = await counts();
    const [engineBefore, ffmpegBefore, startedAt] = [cpu(own), cpu(ffmpegs), Date.now()];
    await new Promise((done) => setTimeout(done, WINDOW_S * 1000));
    const after = await counts();
    const seconds = (Date.now() - startedAt) / 1000;
    const engineCpu = (cpu(own) - engineBefore) / seconds;
    const ffmpegCpu = (cpu(ffmpegs) - ffmpegBefore) / seconds;
    const fps = after.map(
      (health, i) => (health.frames_analysed - (before[i]?.frames_analysed ?? 0)) / seconds,
    );
    const drops = after.reduce(
      (sum, health, i) => sum + health.frames_dropped - (before[i]?.frames_dropped ?? 0),
      0,
    );
    const slowest = Math.min(...fps);
    return { cameras, slowest, drops, engineCpu, ffmpegCpu };
  });
}

/** A row of the table: the engine's figures beside the bound and the contended bound of N cameras. */
async function run(engine: EngineUnderTest, file: string, cameras: number, bound: Bound): Promise<Row> {
  const { slowest, drops, engineCpu, ffmpegCpu } = await measure(engine, file, cameras);
  const boundCpu = cameras * cameraCores(bound.decode, bound.inference);
  const fileBoundCpu = cameras * cameraCores(bound.fileDecode, bound.inference);
  const contended = await contendedBound(file, cameras, RATE, Math.min(WINDOW_S, 10));
  return {
    cameras,
    'slowest fps': round(slowest),
    drops,
    held: slowest >= 0.95 * RATE && drops === 0 ? 'yes' : 'no',
    'engine CPU %': Math.round(engineCpu * 100),
    'ffmpeg CPU %': Math.round(ffmpegCpu * 100),
    'bound CPU %': Math.round(boundCpu * 100),
    'CPU / bound': round((engineCpu + ffmpegCpu) / boundCpu, 2),
    'CPU / file bound': round((engineCpu + ffmpegCpu) / fileBoundCpu, 2),
    'contended bound CPU %': Math.round(contended.cores * 100),
    'contended inf/s': round(contended.inferencesPerSecond),
    'CPU / contended': round((engineCpu + ffmpegCpu) / contended.cores, 2),
  };
}

/** Cores one camera takes in a bound: its decoding and its RATE inferences a second. */
const cameraCores = (decode: number, inference: number) => decode + RATE * inference;

interface Bound {
  /** Cores one live camera's decoding takes. */
  decode: number;
  /** Cores one camera's decoding takes from the file, flat out. */
  fileDecode: number;
  /** Core-seconds of one inference on one thread. */
  inference: number;
  /** Cameras the machine's cores hold at that cost. */
  cameras: number;
}

export async function benchCapacity(): Promise<{ bound: Record<string, number>; rows: Row[]; held: number }> {
  const file = camera1080p();
  const cores = availableParallelism();
  const fileDecode = decodeCost(file);
  const decode = await liveDecodeCost(file, cores, WINDOW_S);
  const inference = (await rawParallel(1))['median ms'] / 1000;
  const bound: Bound = {
    decode,
    fileDecode,
    inference,
    cameras: Math.floor(cores / cameraCores(decode, inference)),
  };

  const work = mkdtempSync(join(tmpdir(), 'vc-bench-capacity-'));
  await buildZapk(EXAMPLE, join(work, 'example.zapk'));
  const rows: Row[] = [];
  // BENCH_ANALYSIS_SIZE: the engine's --analysis-size (default 1280), to see what a smaller one saves.
  const size = process.env.BENCH_ANALYSIS_SIZE;
  const engine = await engineWith(work, 'capacity', [
    ...['--analysis-fps', String(RATE)],
    ...(size ? ['--analysis-size', size] : []),
  ]);
  try {
    const most = Number(process.env.BENCH_CAPACITY_MAX ?? bound.cameras + 1);
    for (let cameras = 1; cameras <= most; cameras++) {
      const row = await run(engine, file, cameras, bound);
      rows.push(row);
      console.log(JSON.stringify(row));
      // Two cameras past the first one not held: the rest would not be either.
      if (rows.filter((r) => r.held === 'no').length >= 2) break;
    }
  } finally {
    engine.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const held = Math.max(0, ...rows.filter((row) => row.held === 'yes').map((row) => row.cameras));
  const contendedHeld = await contendedCameras(file, rows, bound.cameras);
  return {
    bound: {
      cores,
      'decode cores / camera': round(decode, 3),
      'file decode cores / camera': round(fileDecode, 3),
      'file bound cameras': Math.floor(cores / cameraCores(fileDecode, inference)),
      'inference ms (1 thread)': round(inference * 1000, 1),
      'bound cameras': bound.cameras,
      'held cameras': held,
      'held / bound': round(held / Math.max(1, bound.cameras), 2),
      'contended bound cameras': contendedHeld,
      'held / contended': round(held / Math.max(1, contendedHeld), 2),
    },
    rows,
    held,
  };
}

/** The contended bound keeps a row's cameras when its sessions keep 95% of their N x rate inferences. */
const keeps = (cameras: number, inferencesPerSecond: number) => inferencesPerSecond >= 0.95 * cameras * RATE;

/**
 * The most cameras the contended bound itself keeps: what any engine could hold on this machine. The
 * engine's rows measured it up to their last; past that it is measured alone, up to the bound.
 */
async function contendedCameras(file: string, rows: Row[], most: number): Promise<number> {
  let kept = 0;
  for (const row of rows) {
    if (!keeps(row.cameras, row['contended inf/s'])) return kept;
    kept = row.cameras;
  }
  for (let cameras = kept + 1; cameras <= most; cameras++) {
    const contended = await contendedBound(file, cameras, RATE, Math.min(WINDOW_S, 10));
    console.log(JSON.stringify({ cameras, 'contended bound alone': contended }));
    if (!keeps(cameras, contended.inferencesPerSecond)) break;
    kept = cameras;
  }
  return kept;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

if (import.meta.url === `file://${process.argv[1]}`) {
  const { bound, rows } = await benchCapacity();
  console.log(`== bench:capacity: 1080p25 H.264 cameras analysed at ${RATE} fps each ==`);
  console.table(rows);
  console.log(
    '== bound (same run): ffmpeg decoding the live cameras alone + N x 5 single-thread inferences; file bound: the file decoded flat out instead; contended: live decoding and inferences at once, no engine ==',
  );
  console.table([bound]);
}
