import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { FrameSource } from '../engine/media/frame-source';
import { MainRecorder } from '../engine/media/main-recorder';
import { cpuSeconds } from '../engine/system/process-stats';
import { camera1080p } from './decode';

/**
 * What a camera's reading costs with and without its sub-stream (issue 36), per camera, measured
 * on the ffmpeg processes themselves (user + system CPU over the window), as a task reads them:
 * - today: the 1080p25 main stream decoded, dropped to 5 fps, bounded to 1280 px, PPM out, and
 *   copied into clip segments, one ffmpeg (FrameSource with record);
 * - sub-stream: the 640x360 sub-stream decoded likewise (no recording) beside the main stream
 *   copied into clip segments without decoding (MainRecorder);
 * - and the copy-only main stream alone.
 * Rerun on a quiet machine: `npm run bench:substream` (BENCH_CAMERAS, BENCH_WINDOW_S).
 */

const CAMERAS = Number(process.env.BENCH_CAMERAS ?? 2);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 4);
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 10);
const RATE = 5;
const ffmpeg = findFfmpeg();

/** The 1080p camera scaled to 640x360, as its sub-stream; made once beside it. */
function subStreamOf(main: string): string {
  const file = main.replace(/\.flv$/, '-640x360.flv');
  if (!existsSync(file))
    execFileSync(ffmpeg, [
      ...['-hide_banner', '-loglevel', 'error', '-y', '-i', main, '-vf', 'scale=640:360'],
      ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', '50', '-pix_fmt', 'yuv420p', '-an', file],
    ]);
  return file;
}

interface Reader {
  pid: number | undefined;
  stop(): Promise<void>;
}

const sleep = (s: number) => new Promise((done) => setTimeout(done, s * 1000));

/** Cores the readers take per camera over the window, after the warm-up. */
async function measure(readers: Reader[]): Promise<number> {
  await sleep(WARMUP_S);
  const cpu = () => readers.reduce((sum, reader) => sum + (reader.pid ? cpuSeconds(reader.pid) : 0), 0);
  const started = cpu();
  await sleep(WINDOW_S);
  const used = cpu() - started;
  await Promise.all(readers.map((reader) => reader.stop()));
  return used / WINDOW_S / CAMERAS;
}

function decoding(input: string, record?: string): Reader {
  const source = new FrameSource(
    { kind: 'file', input },
    { ffmpeg, outputFps: RATE, ...(record && { record: { dir: record, segmentS: 1 } }) },
  );
  source.on('frame', (frame) => frame.release());
  source.start();
  return source;
}

function copying(input: string, dir: string): Reader {
  const recorder = new MainRecorder(
    { kind: 'file', input },
    { ffmpeg, record: () => ({ dir, segmentS: 1 }) },
  );
  void recorder.start(15_000);
  return {
    get pid() {
      return recorder.pid;
    },
    stop: () => recorder.close(),
  };
}

async function main(): Promise<void> {
  const main1080 = camera1080p('h264');
  const sub = subStreamOf(main1080);
  const dir = mkdtempSync(join(tmpdir(), 'vc-bench-substream-'));
  const cams = Array.from({ length: CAMERAS }, (_, i) => i);
  const today = await measure(cams.map((i) => decoding(main1080, mkdtempSync(join(dir, `today-${i}-`)))));
  const withSub = await measure(
    cams.flatMap((i) => [decoding(sub), copying(main1080, mkdtempSync(join(dir, `main-${i}-`)))]),
  );
  const copyOnly = await measure(cams.map((i) => copying(main1080, mkdtempSync(join(dir, `copy-${i}-`)))));
  rmSync(dir, { recursive: true, force: true });
  const pct = (cores: number) => Math.round(cores * 1000) / 10;
  console.table([
    { reading: '1080p main decoded at 5 fps + recorded (today)', 'CPU % / camera': pct(today) },
    { reading: '640x360 sub decoded at 5 fps + 1080p main copied', 'CPU % / camera': pct(withSub) },
    { reading: '1080p main copied only (clips)', 'CPU % / camera': pct(copyOnly) },
  ]);
  console.log(
    `${CAMERAS} cameras at once, ${WINDOW_S} s window after ${WARMUP_S} s; sub / today = ${(withSub / today).toFixed(2)}`,
  );
}

void main();
