import { describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock';
import { SupervisedFfmpeg } from '../engine/live/supervised-ffmpeg';
import { eventually } from './helpers/eventually';

describe('SupervisedFfmpeg restarts', () => {
  it('wait 1, 2, 4, 8 s of its clock after each death, as the reconnect policy says', async () => {
    const clock = new ManualClock(0);
    const spawnedAt: number[] = [];
    // A "ffmpeg" that dies at once: each death is real, each wait is on the clock.
    const child = new SupervisedFfmpeg({
      ffmpeg: '/bin/false',
      args: () => {
        spawnedAt.push(clock.now());
        return [];
      },
      clock,
    });
    const retrying = (inS: number) =>
      eventually(
        `retrying in ${inS} s`,
        () =>
          JSON.stringify(child.health()) ===
          JSON.stringify({ state: 'retrying', last_error: 'ffmpeg exited with code 1', retry_in_s: inS }),
        10_000,
        10,
      );
    child.start();
    for (const waitS of [1, 2, 4, 8]) {
      await retrying(waitS);
      clock.advance(waitS * 1_000);
    }
    await retrying(16);
    await child.stop();
    expect(spawnedAt).toEqual([0, 1_000, 3_000, 7_000, 15_000]);
    expect([child.state, clock.pending]).toEqual(['stopped', 0]);
  });
});
