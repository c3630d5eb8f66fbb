import { spawn } from 'node:child_process';
import { InferencePool } from '../../engine/inference/pool';
import { findFfmpeg } from '../../engine/media/ffmpeg';
import { ByteTracker } from '../../engine/tracking/byte-tracker';
import type { TrackedObject } from '../../engine/vision/types';
import { FIXTURE_MODEL } from './example-package';
import { VIDEO } from './fixtures';

export const FIXTURE_SIZE = { width: 768, height: 576 } as const;

/**
 * Every frame of the fixture video (795 at 10 fps) through the fixture model and the tracker, as a
 * video task analyses it at the source's rate: the rules' input frame by frame, without the engine.
 * `floor` is the lowest class threshold of the apps, which sets the tracker as the pipeline does.
 */
export async function fixtureTracks(floor: number): Promise<TrackedObject[][]> {
  const size = FIXTURE_SIZE.width * FIXTURE_SIZE.height * 3;
  const pool = new InferencePool({ workers: 1 });
  let next = 1;
  const tracker = new ByteTracker(
    { highThreshold: Math.min(0.5, floor), newTrackThreshold: Math.min(0.6, floor) },
    () => String(next++),
  );
  const tracked: TrackedObject[][] = [];
  try {
    const child = spawn(findFfmpeg(), [
      '-loglevel',
      'error',
      '-i',
      VIDEO,
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-',
    ]);
    let buffered = Buffer.alloc(0);
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= size) {
        const data = new Uint8Array(buffered.subarray(0, size));
        buffered = buffered.subarray(size);
        const { detections } = await pool.detect(FIXTURE_MODEL, { data, ...FIXTURE_SIZE });
        tracked.push(tracker.update(detections));
      }
    }
  } finally {
    await pool.close();
  }
  return tracked;
}
