import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { encodedFixture, RtmpSource } from './helpers/rtmp-source';

/**
 * `health.stream.fps` is what the source delivers (issue 31, item 14): ffmpeg's own count of the
 * frames it decodes, so neither a low analysis rate (ffmpeg drops frames before the engine sees
 * them) nor a reconnect's catch-up changes it. Real engine, real ffmpeg, the 10 fps fixture.
 */

const FRAMES = 260;
let t: TestEngine;
const cameras: RtmpSource[] = [];

beforeAll(async () => {
  encodedFixture(FRAMES);
  t = await startTestEngine();
}, 60_000);

afterAll(async () => {
  await Promise.all(cameras.map((camera) => camera.kill()));
  await t?.stop();
});

const view = async (taskId: string) => (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
const start = async (body: Record<string, unknown>) => {
  const started = await t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], ...body },
  });
  expect(started.body.code, started.body.msg).toBe(0);
  return (started.body.data as { task_id: string }).task_id;
};
const sourceFps = async (taskId: string) => (await view(taskId)).health.stream?.fps ?? 0;
const near10 = (fps: number) => fps >= 8 && fps <= 12;

describe('health.stream.fps', () => {
  it('is the file’s 10 fps while the task analyses one frame in 10 s', async () => {
    const taskId = await start({ video_url: VIDEO, analysis_fps: 0.1 });
    // ffmpeg counts from its first output frame (5 s in at 0.1 fps), measured after a 2 s warm-up.
    const fps = await eventually('the source’s rate', async () => {
      const measured = await sourceFps(taskId);
      return near10(measured) && measured;
    });
    expect(fps).toBeGreaterThanOrEqual(8);
    const { health } = await view(taskId);
    expect(health.target_fps).toBe(0.1);
    expect(health.frames_analysed).toBeLessThanOrEqual(3);
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 60_000);

  it('shows no spike when an RTMP camera comes back and ffmpeg decodes what it buffered at once', async () => {
    const camera = await RtmpSource.create(`rate-${process.pid}`, FRAMES);
    cameras.push(camera);
    camera.start();
    const taskId = await start({ video_url: camera.url });
    await eventually('the camera’s rate', async () => near10(await sourceFps(taskId)));

    await camera.kill();
    await eventually('the stream lost', async () => (await view(taskId)).status === 'stream_lost');
    camera.start();
    // The backoff runs on the engine's clock, moved by hand.
    await eventually('the stream back', async () => {
      t.advance(1_000);
      return (await view(taskId)).health.stream?.reconnects === 1;
    });
    // Every reading from the reconnect on: ffmpeg probes the camera about 5 s, then decodes those
    // 5 s of frames in a fraction of a second.
    const readings: number[] = [];
    const until = performance.now() + 10_000;
    while (performance.now() < until) {
      readings.push(await sourceFps(taskId));
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(Math.max(...readings)).toBeLessThanOrEqual(12);
    expect(near10(await eventually('the camera’s rate again', () => sourceFps(taskId)))).toBe(true);
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 90_000);
});
