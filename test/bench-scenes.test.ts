import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CROSSING_AT_S, SCENE_SIZE, sceneCamera, sinceEntryS } from '../bench/scenes';
import { findFfmpeg } from '../engine/media/ffmpeg';

/**
 * The still scene of the capacity benches (bench/scenes.ts): bench:video's motion-to-event rows take
 * the person's place in an event for the time since it began to enter (sinceEntryS), so the clip
 * must put it there. Its frames are compared with an empty one of the same still background.
 */

const run = promisify(execFile);
const { width: WIDTH, height: HEIGHT } = SCENE_SIZE;

async function grayFrameAt(file: string, seconds: number): Promise<Buffer> {
  const { stdout } = await run(
    findFfmpeg(),
    [
      '-v',
      'error',
      '-ss',
      String(seconds),
      '-i',
      file,
      '-frames:v',
      '1',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'gray',
      '-',
    ],
    { encoding: 'buffer', maxBuffer: 2 * WIDTH * HEIGHT },
  );
  return stdout;
}

/** The rightmost column where most of the rows differ from the empty frame: the person's right edge. */
function rightEdge(frame: Buffer, empty: Buffer): number {
  for (let x = WIDTH - 1; x >= 0; x--) {
    let differing = 0;
    for (let y = 0; y < HEIGHT; y++)
      if (Math.abs((frame[y * WIDTH + x] ?? 0) - (empty[y * WIDTH + x] ?? 0)) > 25) differing++;
    if (differing > HEIGHT / 4) return x + 1;
  }
  return 0;
}

describe('the still scene', () => {
  it('has its person as far in as sinceEntryS says, and nothing else moving', {
    timeout: 180_000,
  }, async () => {
    const file = await sceneCamera('still');
    const empty = await grayFrameAt(file, 15);
    expect(rightEdge(await grayFrameAt(file, 20), empty)).toBe(0);
    for (const since of [1, 2.5, 4]) {
      const right = rightEdge(await grayFrameAt(file, CROSSING_AT_S + since), empty);
      // One frame (40 ms) either way.
      expect(Math.abs(sinceEntryS(right) - since)).toBeLessThan(0.045);
    }
  });
});
