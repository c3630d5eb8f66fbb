import { execFileSync } from 'node:child_process';
import { findFfmpeg } from '../../engine/media/ffmpeg';

/**
 * Synthetic scenes made by ffmpeg for tests that state what happens when: a flat grey 640x360 H.264
 * clip, one keyframe a second, with something drawn on it.
 */

const SCENE = 'color=c=0x808080:s=640x360';
const ENCODE = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];

/** The grey scene with `filters` (an ffmpeg -vf chain, e.g. drawbox with enable='gte(t,6)') over it. */
export function drawnClip(file: string, seconds: number, fps: number, filters: string): void {
  execFileSync(findFfmpeg(), [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `${SCENE}:r=${fps}:d=${seconds}`],
    ...['-vf', filters, ...ENCODE, '-g', String(fps), file],
  ]);
}

/** The grey scene at 10 fps with a white 30x60 box at y 250 whose x follows `x` (ffmpeg's t in s). */
export function slidingBoxClip(file: string, x: string, seconds = 12): void {
  execFileSync(findFfmpeg(), [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `${SCENE}:r=10:d=${seconds}`],
    ...['-f', 'lavfi', '-i', `color=c=white:s=30x60:r=10:d=${seconds}`],
    ...['-filter_complex', `[0][1]overlay=x='${x}':y=250:shortest=1`, ...ENCODE, '-g', '10', file],
  ]);
}
