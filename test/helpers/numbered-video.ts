import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFfmpeg } from '../../engine/media/ffmpeg';
import type { Frame } from '../../engine/vision/types';

/**
 * A video whose every picture carries its own number, so a test can tell which source frame a
 * decoded picture is, both from the engine's RGB frames and from a clip: the top 40 rows are 16
 * blocks of 40x40, block i white when bit i of the frame number is set, black otherwise.
 */
export const NUMBERED = { width: 640, height: 360, fps: 25, bits: 16, block: 40 } as const;

const BAND = `crop=${NUMBERED.width}:${NUMBERED.block}:0:0`;

/**
 * `seconds` of H.264 (High profile) at 25 fps with a keyframe every `gopFrames` frames, made once
 * per machine and reused.
 */
export function numberedVideo(seconds: number, gopFrames: number): string {
  const dir = join(tmpdir(), 'vc-fixture-cache');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `numbered-${seconds}s-g${gopFrames}-high-inband.mp4`);
  if (existsSync(file)) return file;
  const { width, height, fps, block } = NUMBERED;
  const bit = `mod(floor(N/pow(2,floor(X/${block}))),2)`;
  const partial = `${file}.partial.mp4`;
  execFileSync(findFfmpeg(), [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi'],
    '-i',
    `testsrc2=size=${width}x${height}:rate=${fps},format=yuv420p,split[a][b];` +
      `[b]${BAND},geq=lum='if(${bit},235,16)':cb=128:cr=128[band];[a][band]overlay=0:0`,
    ...['-t', String(seconds), '-c:v', 'libx264', '-preset', 'superfast', '-profile:v', 'high'],
    // A keyframe exactly every gopFrames frames, none in between (no scene cuts), each with the
    // stream's parameter sets in band as cameras send them (an RTSP reader may get no others).
    ...['-g', String(gopFrames), '-keyint_min', String(gopFrames), '-sc_threshold', '0'],
    ...['-x264-params', 'repeat-headers=1'],
    ...['-pix_fmt', 'yuv420p', '-an', partial],
  ]);
  renameSync(partial, file);
  return file;
}

/** The number a picture of numberedVideo() carries, read from an RGB frame of any size. */
export function frameNumber(frame: Pick<Frame, 'data' | 'width' | 'height'>): number {
  const { width, height, data } = frame;
  const y = Math.floor(((NUMBERED.block / 2) * height) / NUMBERED.height);
  let n = 0;
  for (let i = 0; i < NUMBERED.bits; i++) {
    const x = Math.floor(((i + 0.5) * NUMBERED.block * width) / NUMBERED.width);
    if ((data[(y * width + x) * 3] ?? 0) > 128) n |= 1 << i;
  }
  return n;
}

/** The numbers of a video file's pictures, in order (each picture's band averaged block by block). */
export function frameNumbersOf(file: string): number[] {
  const { width, bits } = NUMBERED;
  const raw = execFileSync(
    findFfmpeg(),
    [
      ...['-hide_banner', '-loglevel', 'error', '-i', file, '-map', '0:v:0'],
      ...['-vf', `scale=${width}:${NUMBERED.height},${BAND},scale=${bits}:1:flags=area`],
      ...['-f', 'rawvideo', '-pix_fmt', 'gray', '-'],
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const numbers: number[] = [];
  for (let offset = 0; offset + bits <= raw.length; offset += bits) {
    let n = 0;
    for (let i = 0; i < bits; i++) if ((raw[offset + i] ?? 0) > 128) n |= 1 << i;
    numbers.push(n);
  }
  return numbers;
}
