import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InferencePool } from '../engine/inference/pool';
import type { Frame } from '../engine/vision/types';
import { FIXTURE_MODEL } from './helpers/example-package';
import { FIXTURES } from './helpers/fixtures';

/**
 * A starved machine is not a hung model (issue 31, item 15): an inference host that gets no CPU, or
 * an engine whose event loop is blocked while the answer comes, must not fail the frame, kill the
 * host or quarantine the model; a host that gets no CPU at all is still bounded. Real hosts, the real
 * fixture model; the host is starved by SIGSTOP (no CPU at all, the extreme of starvation).
 */

const DEADLINE_MS = 1_500;
let pool: InferencePool;
let frame: Frame;

beforeAll(async () => {
  const { data, info } = await sharp(join(FIXTURES, 'media', 'basketball1.png'))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  frame = { data, width: info.width, height: info.height };
});

// A pool of its own for each test: one host, the model loaded by a first frame (under the check's
// deadline); later frames get DEADLINE_MS.
beforeEach(async () => {
  pool = new InferencePool({ workers: 1, detectDeadlineMs: DEADLINE_MS, quarantineMs: 60_000 });
  await pool.detect(FIXTURE_MODEL, frame);
}, 60_000);

afterEach(() => pool?.close());

const host = () => {
  expect(pool.hostPids).toHaveLength(1);
  return pool.hostPids[0] as number;
};
const persons = (result: Awaited<ReturnType<InferencePool['detect']>>) =>
  result.detections.filter((d) => d.classIndex === 0).length;

describe('an inference host starved for CPU', () => {
  it('finishes its frame past the deadline, on the same host, and the model is not held back', async () => {
    const pid = host();
    // Stopped before the frame is sent: the deadline runs while the host cannot run at all.
    process.kill(pid, 'SIGSTOP');
    const started = performance.now();
    const detected = pool.detect(FIXTURE_MODEL, frame);
    detected.catch(() => undefined);
    await new Promise((done) => setTimeout(done, DEADLINE_MS * 2));
    process.kill(pid, 'SIGCONT');
    const result = await detected;
    expect(performance.now() - started).toBeGreaterThan(DEADLINE_MS * 2);
    expect(persons(result)).toBe(2);
    expect(host()).toBe(pid);
    expect(pool.starved).toMatch(/^an inference host had 0\.\d s of CPU in \d+\.\d s of a frame$/);
    expect(persons(await pool.detect(FIXTURE_MODEL, frame))).toBe(2);
  });

  it('keeps a frame whose answer came while the engine’s event loop was blocked past the deadline', async () => {
    const pid = host();
    const detected = pool.detect(FIXTURE_MODEL, frame);
    // The engine is busy (a long listing, a burst of work) past the deadline; the host answered meanwhile.
    const until = performance.now() + DEADLINE_MS * 2;
    while (performance.now() < until);
    expect(persons(await detected)).toBe(2);
    await new Promise((done) => setTimeout(done, 200));
    expect(host()).toBe(pid);
  });

  it('is still bounded: a host that gets no CPU at all fails its frame at three times the deadline', async () => {
    const pid = host();
    process.kill(pid, 'SIGSTOP');
    const started = performance.now();
    const failed = await pool.detect(FIXTURE_MODEL, frame).then(
      () => 'finished',
      (error: Error) => error.message,
    );
    const elapsed = performance.now() - started;
    expect(failed).toMatch(/did not finish a frame within 1\.5 s; its frames are refused for 60 s/);
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS * 3 - 50);
    // The stopped host was killed (SIGKILL ends a stopped process too).
    await new Promise((done) => setTimeout(done, 500));
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
