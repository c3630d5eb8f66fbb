import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MOTION_DEFAULTS, MotionDetector } from '../engine/inference/motion';
import { boundingScaleFilter, MAX_FRAME_SIDE } from '../engine/media/analysis-size';
import { FrameSource, sourceInputArgs } from '../engine/media/frame-source';
import { buildZapk } from '../engine/packages/zapk';
import { cpuSeconds } from '../engine/system/process-stats';
import type { Frame } from '../engine/vision/types';
import { RtmpSource } from '../test/helpers/rtmp-source';
import { measure, SETUPS, type SetupName } from './capacity';
import { LIVE_WARMUP_S, LiveDecoders, liveDecodeCost } from './live-decoders';
import { sceneCamera } from './scenes';
import { type EngineUnderTest, EXAMPLE, engineWith, rawParallel } from './video';

/**
 * Where one camera's CPU goes (issue 36, item 4), for each capacity setup (capacity.ts: busy 1080p
 * full-frame and gated, still 1080p gated, still read from its 640x360 sub-stream), each part
 * measured on its own with one live RTMP camera per core, against its physical bound:
 * - decode: ffmpeg decoding the stream to nothing on one thread (this is the bound itself);
 * - scale + rgb: the engine's rate, scale and RGB conversion after decoding (ffmpeg to rawvideo),
 *   less the decode; bound: one swscale pass straight to RGB at the cheapest interpolation;
 * - pipe: the engine's own FrameSource (PPM frames over a socket, its progress output) less the
 *   former, plus this process's reading of the frames; bound: copying the frame bytes once;
 * - motion: the engine's MotionDetector on a camera's frames at RATE (CPU of this process, frames
 *   kept and run through it alone);
 * - detector: the engine's inference hosts, per camera, in an engine running the setup; bound: its
 *   inferences a second (health.gate) at the single-thread cost of one;
 * - engine rest: the engine's own process less the reading and motion above (tracking, rules, gate,
 *   API); bound 0.
 * The cuts table (item 3) measures ffmpeg variants of decode + scale + rgb on the 1080p cameras,
 * each beside today's arguments in the same window.
 * Environment: BENCH_COST_SETUPS (default all; empty for none), BENCH_WINDOW_S (default 10), BENCH_COST_CUTS=0 to
 * leave the cuts out.
 */

const RATE = 5;
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 10);
/** memcpy's rate on one core, bytes a second: the pipe's bound copies each frame once. */
const COPY_BYTES_PER_S = 5e9;

/** The engine's filter chain for a camera read at RATE (frame-source.ts). */
const ENGINE_CHAIN = `fps=${RATE},${boundingScaleFilter()}`;
/** One scale, at the cheapest interpolation, straight to RGB: the least the chain could be. */
const ONE_PASS = `fps=${RATE},scale=w='min(iw,${MAX_FRAME_SIDE})':h='min(ih,${MAX_FRAME_SIDE})':force_original_aspect_ratio=decrease:flags=fast_bilinear`;

interface Variant {
  /** ffmpeg's options before -i. */
  input?: string[];
  threads?: string;
  filter?: string;
}

/** ffmpeg reading the camera as the engine's FrameSource reads it (live FLV, timeouts, whitelist). */
const reading = ({ input = [], threads = '1' }: Variant, url: string) => [
  ...['-threads', threads, ...input],
  ...sourceInputArgs({ kind: 'rtmp', input: url }),
];
const toRgb = (variant: Variant) => (url: string) => [
  ...reading(variant, url),
  ...['-vf', variant.filter ?? ENGINE_CHAIN, '-c:v', 'rawvideo', '-pix_fmt', 'rgb24', '-f', 'null', '-'],
];
const toNothing = (variant: Variant) => (url: string) => [...reading(variant, url), '-f', 'null', '-'];

const CUTS: Record<string, Variant> = {
  '-skip_frame noref': { input: ['-skip_frame', 'noref'] },
  '-flags2 fast': { input: ['-flags2', 'fast'] },
  'decoder threads auto': { threads: '0' },
  'one scale pass to rgb24': { filter: ONE_PASS },
};

interface Read {
  /** Cores per camera: the FrameSource's ffmpeg, this process reading, motion at RATE. */
  ffmpeg: number;
  read: number;
  motion: number;
  /** Bytes a second per camera of frames read. */
  bytes: number;
}

/** Frames kept from the first camera, for motion's cost: 10 s of them at RATE after its warm-up. */
const MOTION_FRAMES = 10 * RATE + MOTION_DEFAULTS.warmupFrames;

/**
 * N cameras of the file read by the engine's FrameSource; the first camera's frames are kept and
 * then run through a MotionDetector on their own, timed by this process's CPU.
 */
async function readFrames(file: string, cameras: number): Promise<Read> {
  const servers = await Promise.all(
    Array.from({ length: cameras }, (_, i) => RtmpSource.serving(`camera-cost-${i}`, file)),
  );
  for (const server of servers) server.start();
  await sleep(0.5);
  const sources = servers.map(
    (server) => new FrameSource({ kind: 'rtmp', input: server.url }, { outputFps: RATE }),
  );
  let bytes = 0;
  const kept: Frame[] = [];
  let keeping = false;
  sources.forEach((source, i) => {
    source.on('frame', (frame) => {
      bytes += frame.data.byteLength;
      if (i === 0 && keeping && kept.length < MOTION_FRAMES)
        kept.push({ ...frame, data: frame.data.slice() });
      frame.release();
    });
    source.start();
  });
  try {
    await sleep(LIVE_WARMUP_S);
    const ffmpeg = () => sources.reduce((sum, source) => sum + (source.pid ? cpuSeconds(source.pid) : 0), 0);
    const own = () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    };
    const [ffmpegBefore, ownBefore, bytesBefore, startedAt] = [ffmpeg(), own(), bytes, Date.now()];
    await sleep(WINDOW_S);
    const seconds = (Date.now() - startedAt) / 1000;
    const read = {
      ffmpeg: (ffmpeg() - ffmpegBefore) / seconds / cameras,
      read: (own() - ownBefore) / seconds / cameras,
      bytes: (bytes - bytesBefore) / seconds / cameras,
    };
    keeping = true;
    while (kept.length < MOTION_FRAMES) await sleep(1);
    const motion = new MotionDetector();
    // Its warm-up only learns the background, once per start: not a camera's running cost.
    for (const frame of kept.splice(0, MOTION_DEFAULTS.warmupFrames)) motion.detect(frame);
    const motionBefore = own();
    for (const frame of kept) motion.detect(frame);
    return { ...read, motion: ((own() - motionBefore) / kept.length) * RATE };
  } finally {
    await Promise.all(sources.map((source) => source.stop()));
    await Promise.all(servers.map((server) => server.kill()));
  }
}

/**
 * Cores per camera of each decoder, all running at once on one live camera each (today's work and a
 * cut's side by side, so that both see the same load).
 */
async function sideBySide(file: string, decoders: ((url: string) => string[])[]): Promise<number[]> {
  const sets = await Promise.all(
    decoders.map((decoder, i) => LiveDecoders.start(file, 1, `cut-${i}`, decoder)),
  );
  try {
    await sleep(LIVE_WARMUP_S);
    const [before, startedAt] = [sets.map((set) => set.cpuSeconds()), Date.now()];
    await sleep(WINDOW_S);
    const seconds = (Date.now() - startedAt) / 1000;
    return sets.map((set, i) => (set.cpuSeconds() - (before[i] ?? 0)) / seconds);
  } finally {
    await Promise.all(sets.map((set) => set.stop()));
  }
}

interface Part {
  part: string;
  [setup: string]: string | number;
}

export async function benchCameraCost(): Promise<{ parts: Part[]; cuts: Part[] }> {
  const cores = availableParallelism();
  const names = (process.env.BENCH_COST_SETUPS?.split(',').filter(Boolean) ??
    Object.keys(SETUPS)) as SetupName[];
  const inference = (await rawParallel(1))['median ms'] / 1000;
  const work = mkdtempSync(join(tmpdir(), 'vc-bench-camera-cost-'));
  await buildZapk(EXAMPLE, join(work, 'example.zapk'));
  const engine: EngineUnderTest = await engineWith(work, 'camera-cost', ['--analysis-fps', String(RATE)]);
  const columns: Record<string, Record<string, string>> = {};
  try {
    const perFile = new Map<string, { decode: number; rgb: number; onePass: number; read: Read }>();
    for (const name of names) {
      const setup = SETUPS[name];
      const file = await sceneCamera(setup.scene, setup.sub);
      let stages = perFile.get(file);
      if (!stages) {
        stages = {
          decode: await liveDecodeCost(file, cores, WINDOW_S, toNothing({})),
          rgb: await liveDecodeCost(file, cores, WINDOW_S, toRgb({})),
          onePass: await liveDecodeCost(file, cores, WINDOW_S, toRgb({ filter: ONE_PASS })),
          read: await readFrames(file, cores),
        };
        perFile.set(file, stages);
      }
      const m = await measure(engine, name, cores);
      const { decode, rgb, onePass, read } = stages;
      const engineRest = m.engineCpu / cores - read.read - read.motion;
      const parts: Record<string, [number, number]> = {
        decode: [decode, decode],
        'scale + rgb': [rgb - decode, onePass - decode],
        'pipe (ffmpeg side)': [read.ffmpeg - rgb, 0],
        'read (engine side)': [read.read, read.bytes / COPY_BYTES_PER_S],
        motion: [read.motion, 0],
        detector: [m.hostsCpu / cores, m.detectorRuns * inference],
        'engine rest': [engineRest, 0],
      };
      const [sum, boundSum] = [0, 1].map((k) =>
        Object.values(parts).reduce((total, part) => total + (part[k] ?? 0), 0),
      ) as [number, number];
      parts['sum of parts'] = [sum, boundSum];
      // The engine itself, measured whole: its ffmpeg (bound: decoding alone), its process and hosts.
      parts['engine, whole'] = [(m.engineCpu + m.hostsCpu + m.ffmpegCpu) / cores, boundSum];
      parts["engine's ffmpeg"] = [m.ffmpegCpu / cores, decode];
      columns[name] = Object.fromEntries(
        Object.entries(parts).map(([part, [cost, bound]]) => [part, `${percent(cost)} (${percent(bound)})`]),
      );
      columns[name]['inferences / s'] = `${round(m.detectorRuns, 2)}`;
      console.log(JSON.stringify({ setup: name, ...columns[name] }));
    }
  } finally {
    await engine.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const partNames = Object.keys(Object.values(columns)[0] ?? {});
  const parts = partNames.map((part) => ({
    part,
    ...Object.fromEntries(names.map((name) => [name, columns[name]?.[part] ?? '-'])),
  }));
  const cuts: Part[] = [];
  if (process.env.BENCH_COST_CUTS !== '0') {
    for (const [cut, variant] of Object.entries(CUTS)) {
      for (const scene of ['busy', 'still'] as const) {
        const [decode, cutDecode, chain, cutChain] = await sideBySide(await sceneCamera(scene), [
          toNothing({}),
          toNothing(variant),
          toRgb({}),
          toRgb(variant),
        ]);
        const row: Part = {
          part: cut,
          scene,
          'decode %': percent(decode as number),
          'decode % with cut': percent(cutDecode as number),
          'decode + chain %': percent(chain as number),
          'decode + chain % with cut': percent(cutChain as number),
          'change %': Math.round((100 * ((cutChain as number) - (chain as number))) / (chain as number)),
        };
        console.log(JSON.stringify(row));
        cuts.push(row);
      }
    }
  }
  return { parts, cuts };
}

const sleep = (seconds: number) => new Promise((done) => setTimeout(done, seconds * 1000));
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const percent = (cores: number) => round(cores * 100);

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parts, cuts } = await benchCameraCost();
  console.log(
    `== bench:camera-cost: % of a core per camera at ${RATE} fps, measured (physical bound), one live camera per core ==`,
  );
  console.table(parts);
  if (cuts.length) {
    console.log(
      '== cuts: ffmpeg decoding, and decoding + the rate, scale and RGB chain, % of a core per camera ==',
    );
    console.table(cuts);
  }
}
