import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { FrameSource } from '../engine/media/frame-source';
import { autoCandidates, type Hwaccel, probeHwaccel } from '../engine/media/hwaccel';
import { cpuSeconds } from '../engine/system/process-stats';
import { VIDEO } from '../test/helpers/fixtures';

/**
 * What decoding costs the engine per camera on each decode path this machine opens: N 1080p25
 * cameras (H.264 and HEVC, made from the fixture video) read by the engine's own FrameSource as a
 * task reads them (real time, dropped to 5 fps, bounded to 1280 px, PPM out), software and every
 * hwaccel whose device opens. The bound of the same run is ffmpeg decoding the camera in software to
 * nothing on one thread: the least a software path can cost. Runs anywhere; the hardware rows need a
 * machine with a GPU (BENCH_DECODE_PATHS=none,cuda names them; default: none + the platform's).
 */

const RATE = 5;
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 4);
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 10);
const ffmpeg = findFfmpeg();
/** The fixture's 795 frames played 2.5x faster, so every frame at 25 fps is a new picture. */
const FRAMES = 795;
const CODECS = {
  h264: ['-c:v', 'libx264', '-preset', 'veryfast'],
  hevc: ['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error'],
} as const;
type Codec = keyof typeof CODECS;

/** The fixture as a 1080p25 camera of the codec, 2 s between keyframes; made once. */
export function camera1080p(codec: Codec = 'h264'): string {
  const dir = join(tmpdir(), 'vc-fixture-cache');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, codec === 'h264' ? 'vtest-1080p25.flv' : `vtest-1080p25-${codec}.mkv`);
  if (!existsSync(file)) {
    const partial = `${file}.partial${file.slice(file.lastIndexOf('.'))}`;
    execFileSync(ffmpeg, [
      ...['-hide_banner', '-loglevel', 'error', '-y', '-i', VIDEO],
      ...['-vf', 'setpts=PTS/2.5,scale=1920:1080', '-r', '25'],
      ...[...CODECS[codec], '-g', '50', '-pix_fmt', 'yuv420p', '-an', partial],
    ]);
    execFileSync('mv', [partial, file]);
  }
  return file;
}

/** Cores one camera's software decoding takes at least: ffmpeg, one thread, to nothing. */
export function decodeCost(file: string): number {
  const started = cpuOfChildren();
  execFileSync(ffmpeg, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-threads',
    '1',
    '-i',
    file,
    '-f',
    'null',
    '-',
  ]);
  return (cpuOfChildren() - started) / (FRAMES / 25);
}

/** CPU seconds of this process's waited-for children (cutime + cstime in /proc). */
export function cpuOfChildren(): number {
  const fields = readFileSync(`/proc/${process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

interface Row {
  codec: Codec;
  path: Hwaccel;
  cameras: number;
  'slowest fps': number;
  'CPU % / camera': number;
  'bound % / camera': number;
  'CPU / bound': number;
  /** Cameras whose ffmpeg decoded in software although the path was a hwaccel. */
  'in software': number;
  failed: number;
}

async function run(codec: Codec, file: string, path: Hwaccel, cameras: number, bound: number): Promise<Row> {
  const sources = Array.from(
    { length: cameras },
    (_, i) => new FrameSource({ kind: 'file', input: file }, { hwaccel: path, outputFps: RATE, seekS: i }),
  );
  const frames = sources.map(() => 0);
  let failed = 0;
  let inSoftware = 0;
  sources.forEach((source, i) => {
    source.on('software', (why) => {
      inSoftware++;
      console.error(`${path} camera ${i} decodes in software: ${why}`);
    });
    source.on('frame', (frame) => {
      frames[i] = (frames[i] ?? 0) + 1;
      frame.release();
    });
    source.on('exit', (exit) => {
      if (!exit.stopped) {
        failed++;
        console.error(`${path} camera ${i} ended: ${exit.stderrTail.split('\n').slice(-3).join(' | ')}`);
      }
    });
    source.start();
  });
  try {
    await sleep(WARMUP_S);
    const cpu = () => sources.reduce((sum, source) => sum + (source.pid ? cpuSeconds(source.pid) : 0), 0);
    const [cpuBefore, framesBefore, startedAt] = [cpu(), [...frames], Date.now()];
    await sleep(WINDOW_S);
    const seconds = (Date.now() - startedAt) / 1000;
    const perCamera = (cpu() - cpuBefore) / seconds / cameras;
    const slowest = Math.min(...frames.map((count, i) => (count - (framesBefore[i] ?? 0)) / seconds));
    return {
      codec,
      path,
      cameras,
      'slowest fps': round(slowest),
      'CPU % / camera': round(perCamera * 100),
      'bound % / camera': round(bound * 100),
      'CPU / bound': round(perCamera / bound, 2),
      'in software': inSoftware,
      failed,
    };
  } finally {
    await Promise.all(sources.map((source) => source.stop()));
  }
}

const sleep = (seconds: number) => new Promise((done) => setTimeout(done, seconds * 1000));
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function benchDecode(): Promise<{ paths: Record<string, string>[]; rows: Row[] }> {
  const asked = (process.env.BENCH_DECODE_PATHS?.split(',') as Hwaccel[] | undefined) ?? [
    'none',
    ...autoCandidates(process.platform),
  ];
  const paths: Record<string, string>[] = [];
  const open: Hwaccel[] = [];
  for (const path of asked) {
    const failure = path === 'none' ? null : await probeHwaccel(ffmpeg, path);
    paths.push({ path, opens: failure === null ? 'yes' : `no: ${failure}` });
    if (failure === null) open.push(path);
  }
  const counts = (process.env.BENCH_DECODE_CAMERAS ?? `1,${availableParallelism()}`).split(',').map(Number);
  const rows: Row[] = [];
  for (const codec of Object.keys(CODECS) as Codec[]) {
    const file = camera1080p(codec);
    const bound = decodeCost(file);
    for (const path of open) {
      for (const cameras of counts) {
        const row = await run(codec, file, path, cameras, bound);
        rows.push(row);
        console.log(JSON.stringify(row));
      }
    }
  }
  return { paths, rows };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { paths, rows } = await benchDecode();
  console.log(`== bench:decode: decode paths (ffmpeg ${ffmpeg}) ==`);
  console.table(paths);
  console.log(`== bench:decode: 1080p25 cameras read as tasks read them (${RATE} fps out, 1280 px) ==`);
  console.table(rows);
}
