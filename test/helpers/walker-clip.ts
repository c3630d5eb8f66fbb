import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findFfmpeg } from '../../engine/media/ffmpeg';
import { VIDEO } from './fixtures';

const run = promisify(execFile);

/** The scene of walkerClip(): its size and rate, and where the person is drawn. */
export const WALKER = {
  width: 768,
  height: 576,
  fps: 25,
  /** The person's top edge, px. */
  top: 150,
  /** The person's size, px: cut from the fixture video at twice its size. */
  sprite: { width: 112, height: 248 },
} as const;

export interface WalkerScene {
  width: number;
  height: number;
  fps: number;
  top: number;
  sprite: { width: number; height: number };
}

/**
 * A person cut from the fixture video, walking on grey (H.264, a keyframe a second) for `seconds`,
 * the person's left edge at `x` (an ffmpeg expression of t, in s); with `barTop`, a 10 px green bar
 * of the person's width moves with it at that height (a mark a test can find in the decoded frames).
 * Written as walker.mp4 in `dir`.
 */
export async function walkerClip(
  dir: string,
  x: string,
  seconds: number,
  barTop?: number,
  /** Another scene: its size, rate, the person's top edge and size (a small, distant person). */
  scene: WalkerScene = WALKER,
): Promise<string> {
  const ffmpeg = findFfmpeg();
  const { width, height, fps, top, sprite } = scene;
  const person = await walkerSprite(join(dir, 'walker.png'), sprite.height, sprite.width);
  const walk = `[0][1]overlay=x='${x}':y=${top}:shortest=1`;
  const clip = join(dir, 'walker.mp4');
  await run(ffmpeg, [
    ...[
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `color=c=0x808080:s=${width}x${height}:r=${fps}:d=${seconds}`,
    ],
    ...['-loop', '1', '-framerate', String(fps), '-i', person],
    ...(barTop === undefined
      ? ['-filter_complex', walk]
      : [
          ...['-f', 'lavfi', '-i', `color=c=0x00ff00:s=${sprite.width}x10:r=${fps}`],
          ...['-filter_complex', `${walk}[a];[a][2]overlay=x='${x}':y=${barTop}:shortest=1`],
        ]),
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', String(fps), '-pix_fmt', 'yuv420p', clip],
  ]);
  return clip;
}

/**
 * The person of walkerClip(), cut from the fixture video (56x124 px at 5 s) and scaled to `height`
 * px (`width` px; by default in proportion), as a PNG at `file`.
 */
export async function walkerSprite(file: string, height: number, width = -2): Promise<string> {
  await run(findFfmpeg(), [
    ...['-v', 'error', '-y', '-ss', '5', '-i', VIDEO, '-frames:v', '1'],
    ...['-vf', `crop=56:124:664:252,scale=${width}:${height}`, file],
  ]);
  return file;
}
