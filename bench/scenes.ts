import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { walkerSprite } from '../test/helpers/walker-clip';
import { camera1080p } from './decode';

/**
 * The cameras the capacity benches serve: a busy scene (the fixture video made into 1080p25, people
 * crossing all the time), a still one (a textured 1080p25 scene where one person, cut from the
 * fixture as test/helpers/walker-clip.ts does, crosses once every STILL_PERIOD_S) and an empty one
 * (the still scene's background, where nothing moves at all), each also as a 640x360 sub-stream of
 * the same pictures. Made once per machine, H.264 in FLV, 2 s between keyframes, as bench/decode.ts
 * makes the busy one.
 */

export type Scene = 'busy' | 'still' | 'empty';
export const SCENE_SIZE = { width: 1920, height: 1080 } as const;
/** Seconds between the still scene's crossings: the clip's length, played in a loop. */
export const STILL_PERIOD_S = 25;
/** Seconds a crossing takes, from off the left edge to off the right one. */
const CROSSING_S = 6;
/** When, in each period, the person begins to enter (its picture's right edge at x = 0). */
export const CROSSING_AT_S = 2;
/** The person at three times the fixture's size: about a third of the 1080 lines, as near a camera. */
const PERSON = { width: 168, height: 372, top: 500 } as const;
/** How fast the person crosses, source pixels a second. */
const SPEED = (SCENE_SIZE.width + PERSON.width) / CROSSING_S;

/**
 * Seconds since the person's picture began to enter the still scene (its left edge) when a box of
 * the person reaches `right` (source pixels): the media time from the first motion to that frame,
 * plus the constant margin of background the cut carries on its right.
 */
export const sinceEntryS = (right: number) => right / SPEED;
export const SUB_STREAM = { width: 640, height: 360 } as const;

const ffmpeg = findFfmpeg();
const cacheDir = () => {
  const dir = join(tmpdir(), 'vc-fixture-cache');
  mkdirSync(dir, { recursive: true });
  return dir;
};

/**
 * The scene's 1080p25 camera, or its 640x360 sub-stream at `subFps` (25, as the main stream, unless
 * told: a site may set its cameras' sub-streams to the analysis rate, as Frigate advises).
 */
export async function sceneCamera(scene: Scene, sub = false, subFps = 25): Promise<string> {
  const main = scene === 'busy' ? camera1080p() : await stillCamera(scene === 'still');
  return sub ? subStreamOf(main, subFps) : main;
}

/** The still scene's camera; without the person, the empty scene's. */
async function stillCamera(person: boolean): Promise<string> {
  const file = join(cacheDir(), `${person ? 'still' : 'empty'}-1080p25-${STILL_PERIOD_S}s.flv`);
  if (existsSync(file)) return file;
  const work = mkdtempSync(join(tmpdir(), 'vc-still-scene-'));
  try {
    // A fixed pattern of grain (one frame, looped) under a blur: texture that compresses like a
    // real wall or car park, and that does not change from frame to frame.
    const background = join(work, 'background.png');
    execFileSync(ffmpeg, [
      ...[
        '-v',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        `color=c=0x6f7868:s=${SCENE_SIZE.width}x${SCENE_SIZE.height},noise=alls=70:allf=u`,
      ],
      ...['-vf', 'gblur=sigma=1.5', '-frames:v', '1', background],
    ]);
    if (!person) {
      encode(file, ['-loop', '1', '-framerate', '25', '-t', String(STILL_PERIOD_S), '-i', background]);
      return file;
    }
    const sprite = await walkerSprite(join(work, 'walker.png'), PERSON.height, PERSON.width);
    const x = `if(between(t,${CROSSING_AT_S},${CROSSING_AT_S + CROSSING_S}),-${PERSON.width}+(t-${CROSSING_AT_S})*${SPEED},-${2 * PERSON.width})`;
    encode(file, [
      ...['-loop', '1', '-framerate', '25', '-t', String(STILL_PERIOD_S), '-i', background],
      ...['-loop', '1', '-framerate', '25', '-i', sprite],
      ...['-filter_complex', `[0][1]overlay=x='${x}':y=${PERSON.top}:shortest=1`],
    ]);
    return file;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The camera's pictures at 640x360 and `fps`: what the camera's second encoder would send. */
function subStreamOf(main: string, fps: number): string {
  const rate = fps === 25 ? '' : `-${fps}fps`;
  const file = main.replace(/\.flv$/, `-${SUB_STREAM.width}x${SUB_STREAM.height}${rate}.flv`);
  if (!existsSync(file))
    encode(file, ['-i', main, '-vf', `scale=${SUB_STREAM.width}:${SUB_STREAM.height}`], fps);
  return file;
}

/** H.264 at `fps`, a keyframe every 2 s. */
function encode(file: string, input: string[], fps = 25): void {
  const partial = `${file}.partial.flv`;
  execFileSync(ffmpeg, [
    ...['-hide_banner', '-loglevel', 'error', '-y', ...input, '-r', String(fps)],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', String(2 * fps)],
    ...['-pix_fmt', 'yuv420p', '-an', partial],
  ]);
  execFileSync('mv', [partial, file]);
}
