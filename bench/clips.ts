import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIP_BUFFER_LIMITS, ClipBuffers } from '../engine/clips/clip-buffers';
import { cutClip } from '../engine/clips/cut-clip';
import type { Segment } from '../engine/clips/segment-ring';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { FrameSource } from '../engine/media/frame-source';
import { cpuSeconds } from '../engine/system/process-stats';
import { alarmToReady } from './clip-ready';
import { camera1080p, cpuOfChildren, decodeCost } from './decode';

/**
 * What keeping a camera's own stream for clips costs (issue 35): N 1080p25 H.264 cameras (the
 * fixture made into one, 2 s between keyframes) read by the engine's FrameSource as a task reads
 * them (real time, 5 fps out), with the clip buffer off and on, in the same run. Bounds of the same
 * run: decoding the camera to nothing (the least reading it costs), ffmpeg copying it into the same
 * segments alone (the least buffering costs), the source's own bytes (the least the buffer writes),
 * copying a clip's segment files (the least a cut takes).
 */

const RATE = 5;
const FPS = 25;
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 4);
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 20);
/** Alarm clips as the settings' defaults cut them: 5 s before, 10 s after. */
const CLIP_S = 15;
const ALARMS_PER_HOUR = [10, 60, 360];
const CUTS = 5;
/** Alarm clips whose time to ready the engine run measures. */
const READY_VISITS = 5;
const ffmpeg = findFfmpeg();

interface Measured {
  /**
   * Cores per camera at real time: CPU seconds per second of video read, of the cameras' ffmpeg
   * processes and of this process (frames, the buffer's timer). Per second of video, not of wall
   * time: on a loaded machine a camera may get less than real time, and costs less by the second.
   */
  ffmpeg: number;
  node: number;
  /** Seconds of video read per second of wall time, slowest camera (1: real time). */
  slowestSpeed: number;
  /** Bytes the buffer was written per second of video. */
  bufferBytesPerS: number;
}

/** N cameras read for the window, each with a buffer when `record`; the buffers' segments for the cut after. */
async function run(
  file: string,
  cameras: number,
  record: boolean,
  root: string,
): Promise<Measured & { buffers: ClipBuffers }> {
  const buffers = new ClipBuffers(join(root, record ? 'on' : 'off'));
  const sources = Array.from({ length: cameras }, (_, i) => {
    const taskId = `camera-${i}`;
    const source = new FrameSource(
      { kind: 'file', input: file },
      { ffmpeg, outputFps: RATE, seekS: i, record: record ? buffers.target(taskId) : undefined },
    );
    buffers.follow(taskId, source.run, source);
    return source;
  });
  for (const source of sources) {
    source.on('frame', (frame) => frame.release());
    source.start();
  }
  const written = () =>
    sources.reduce(
      (sum, _, i) =>
        sum +
        buffers.segments(`camera-${i}`, 0, Number.POSITIVE_INFINITY).reduce((s, seg) => s + seg.bytes, 0),
      0,
    );
  try {
    await sleep(WARMUP_S);
    const ffmpegCpu = () =>
      sources.reduce((sum, source) => sum + (source.pid ? cpuSeconds(source.pid) : 0), 0);
    const nodeCpu = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    };
    const read = () => sources.map((source) => source.inputFrames / FPS);
    const [ffmpegBefore, nodeBefore, readBefore, bytesBefore, startedAt] = [
      ffmpegCpu(),
      nodeCpu(),
      read(),
      written(),
      Date.now(),
    ];
    await sleep(WINDOW_S);
    const seconds = (Date.now() - startedAt) / 1000;
    const readS = read().map((videoS, i) => videoS - (readBefore[i] ?? 0));
    const videoS = readS.reduce((sum, s) => sum + s, 0);
    return {
      ffmpeg: (ffmpegCpu() - ffmpegBefore) / videoS,
      node: (nodeCpu() - nodeBefore) / videoS,
      slowestSpeed: Math.min(...readS) / seconds,
      // The window is shorter than the buffer keeps (40 s): nothing written in it was removed yet.
      bufferBytesPerS: (written() - bytesBefore) / videoS,
      buffers,
    };
  } finally {
    await Promise.all(sources.map((source) => source.stop()));
  }
}

/** Cores ffmpeg takes to copy the camera into 1 s-and-up MPEG-TS segments alone, reading included. */
function copyBound(file: string, root: string): number {
  const dir = mkdtempSync(join(root, 'copy-'));
  const before = cpuOfChildren();
  execFileSync(ffmpeg, [
    ...['-hide_banner', '-loglevel', 'error', '-i', file, '-map', '0:v:0', '-c:v', 'copy'],
    ...['-f', 'segment', '-segment_time', '1', '-segment_format', 'mpegts', join(dir, '%06d.ts')],
  ]);
  const duration = Number(
    execFileSync(join(ffmpeg, '..', 'ffprobe'), [
      ...['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file],
    ]).toString(),
  );
  return (cpuOfChildren() - before) / duration;
}

/** Cuts the last CLIP_S seconds of camera 0's buffer CUTS times: wall ms each, the clip's bytes, and the copy bound. */
async function cuts(buffers: ClipBuffers, root: string) {
  const now = Date.now();
  const segments: Segment[] = buffers.segments('camera-0', now - CLIP_S * 1000, now);
  const times: number[] = [];
  let bytes = 0;
  let seconds = 0;
  for (let i = 0; i < CUTS; i++) {
    const started = performance.now();
    const clip = await cutClip(ffmpeg, segments, join(root, `clip-${i}.mp4`));
    times.push(performance.now() - started);
    bytes = statSync(clip.file).size;
    seconds = (clip.endAt - clip.startAt) / 1000;
  }
  // An ffmpeg that starts, makes one empty frame and exits: the floor of any cut that runs one.
  const spawnStarted = performance.now();
  execFileSync(ffmpeg, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'nullsrc',
    '-frames:v',
    '1',
    '-f',
    'null',
    '-',
  ]);
  const spawnMs = performance.now() - spawnStarted;
  const copyStarted = performance.now();
  for (const [i, segment] of segments.entries()) copyFileSync(segment.file, join(root, `copy-${i}.ts`));
  const copyMs = performance.now() - copyStarted;
  return { times: times.sort((a, b) => a - b), bytes, seconds, copyMs, spawnMs };
}

const sleep = (seconds: number) => new Promise((done) => setTimeout(done, seconds * 1000));
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const mib = (bytes: number) => round(bytes / 1024 / 1024, 1);

export async function benchClips() {
  const file = camera1080p('h264');
  const root = mkdtempSync(join(tmpdir(), 'vc-bench-clips-'));
  const loadBefore = loadavg()[0] ?? 0;
  try {
    const readBound = decodeCost(file);
    const copy = copyBound(file, root);
    const sourceBytesPerS = statSync(file).size / (795 / FPS);
    const counts = (process.env.BENCH_CLIPS_CAMERAS ?? `1,${availableParallelism()}`).split(',').map(Number);
    const cpuRows: Record<string, number | string>[] = [];
    let cut: Awaited<ReturnType<typeof cuts>> | null = null;
    let bufferBytesPerS = 0;
    for (const cameras of counts) {
      const off = await run(file, cameras, false, root);
      off.buffers.close();
      const on = await run(file, cameras, true, root);
      if (cameras === counts[0]) {
        cut = await cuts(on.buffers, root);
        bufferBytesPerS = on.bufferBytesPerS;
      }
      on.buffers.close();
      const added = on.ffmpeg + on.node - (off.ffmpeg + off.node);
      cpuRows.push({
        cameras,
        'speed off/on (1 = real time)': `${round(off.slowestSpeed, 2)}/${round(on.slowestSpeed, 2)}`,
        'CPU % / camera, off': round((off.ffmpeg + off.node) * 100, 2),
        'CPU % / camera, on': round((on.ffmpeg + on.node) * 100, 2),
        'added % of a core': round(added * 100, 2),
        'goal %': 2,
        'read bound %': round(readBound * 100, 2),
        'copy bound %': round(copy * 100, 2),
        'added / copy bound': round(added / copy, 2),
      });
      console.log(JSON.stringify(cpuRows.at(-1)));
    }
    const hour = 3600;
    const diskRows: Record<string, number | string>[] = [
      {
        what: 'buffer (written, then removed past 40 s)',
        'MiB / camera-hour': mib(bufferBytesPerS * hour),
        'bound MiB (source bytes)': mib(sourceBytesPerS * hour),
        'written / bound': round(bufferBytesPerS / sourceBytesPerS, 2),
        'on disk at once MiB': mib(
          Math.min(bufferBytesPerS * (CLIP_BUFFER_LIMITS.keepMs / 1000), CLIP_BUFFER_LIMITS.maxBytesPerTask),
        ),
      },
      ...ALARMS_PER_HOUR.map((alarms) => {
        return {
          what: `alarm clips, ${alarms} alarms/hour (${CLIP_S} s asked, ${round(cut?.seconds ?? 0)} s cut: whole GOPs)`,
          'MiB / camera-hour': mib((cut?.bytes ?? 0) * alarms),
          'bound MiB (source bytes)': mib(sourceBytesPerS * CLIP_S * alarms),
          'written / bound': round(cut ? cut.bytes / cut.seconds / sourceBytesPerS : 0, 2),
          'on disk at once MiB': '(quota)',
        };
      }),
    ];
    const cutRows = cut
      ? [
          {
            clip: `${round(cut.seconds)} s, ${mib(cut.bytes)} MiB`,
            'cut ms median': round(cut.times[Math.floor(CUTS / 2)] ?? 0, 0),
            'cut ms max': round(cut.times.at(-1) ?? 0, 0),
            'bound ms (copying its segment files)': round(cut.copyMs, 1),
            'cut / bound': round((cut.times[Math.floor(CUTS / 2)] ?? 0) / Math.max(cut.copyMs, 0.1), 0),
            'bound ms (an ffmpeg that starts and exits)': round(cut.spawnMs, 0),
            'cut / ffmpeg start': round((cut.times[Math.floor(CUTS / 2)] ?? 0) / cut.spawnMs, 1),
          },
        ]
      : [];
    const late = await alarmToReady(READY_VISITS);
    const readyRows = [
      {
        clips: late.length,
        'ms after its end, median': round(late[Math.floor(late.length / 2)] ?? 0, 0),
        'ms after its end, max': round(late.at(-1) ?? 0, 0),
        'bound ms (a keyframe interval + the median cut)': round(
          1000 + (cutRows[0]?.['cut ms median'] ?? 0),
          0,
        ),
      },
    ];
    return { cpuRows, diskRows, cutRows, readyRows, load: [loadBefore, loadavg()[0] ?? 0] };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { cpuRows, diskRows, cutRows, readyRows, load } = await benchClips();
  const cores = availableParallelism();
  const [before, after] = load.map((value) => round(value, 2));
  console.log(
    `== bench:clips: 1080p25 H.264 cameras (GOP 2 s), ${RATE} fps analysed, buffer off vs on; CPU per second of video read ==`,
  );
  console.log(`   ${cores} cores, load average (1 min) ${before} before, ${after} after`);
  console.table(cpuRows);
  console.log('== bench:clips: disk per camera-hour ==');
  console.table(diskRows);
  console.log(`== bench:clips: time to cut a ${CLIP_S} s clip from the buffer (median of ${CUTS}) ==`);
  console.table(cutRows);
  console.log('== bench:clips: an alarm clip ready after its end (alarm + post), through a real engine ==');
  console.table(readyRows);
}
