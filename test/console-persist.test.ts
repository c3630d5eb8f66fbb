import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { RtmpSource } from './helpers/rtmp-source';

/*
 * An operator's camera is kept whatever its stream does (issue 34, point 1), in Chromium against an
 * engine in its own process: a live RTMP camera (ffmpeg serving the fixture) that dies like a camera
 * losing power says "No signal since" on the wall, and plays again on its own when it returns; a
 * closed camera starts again with its settings in one click. That a persistent task outlives the 5
 * minutes that close other tasks is the lifecycle test's (test/task-lifecycle.test.ts, on the manual
 * clock): here the engine runs in real time.
 */

const POLL = { timeout: 45_000 };
const REGION = [
  [40, 40],
  [700, 40],
  [700, 520],
  [40, 520],
];

let c: ConsoleEngine;
let camera: RtmpSource;
let taskId: string;

beforeAll(async () => {
  c = await startConsoleEngine('console-persist', { engineArgs: ['--analysis-fps', '2'] });
  camera = await RtmpSource.create('persist-dock', 100);
  camera.start();
  const started = await c.api<{ task_id: string }>('POST', '/api/task', {
    name: 'Dock',
    persistent: true,
    zapk_id: 'builtin',
    app_ids: ['motion'],
    video_url: camera.url,
    app_configs: [{ app_id: 'motion', polygon: REGION }],
  });
  taskId = started.task_id;
}, 120_000);

afterAll(async () => {
  await camera?.kill();
  await c?.stop();
});

const task = (id: string) => c.api<TaskView>('GET', `/api/task/${id}`);
const noSignal = (page: Page) => page.locator('.wall-no-signal');

describe("an operator's camera", () => {
  it('says "No signal since" on the wall when its stream dies, and plays again alone when it returns', async () => {
    const page = await c.open('/wall');
    await page.getByRole('radio', { name: '1', exact: true }).check();
    await page
      .getByRole('img', { name: 'Latest picture of Dock' })
      .or(page.getByLabel('Annotated video of Dock'))
      .first()
      .waitFor(POLL);

    const diedAt = Date.now();
    await camera.kill();
    await noSignal(page).waitFor(POLL);
    const shownAfterS = (Date.now() - diedAt) / 1000;
    expect(await noSignal(page).textContent()).toMatch(/^No signal since \d{2}:\d{2}:\d{2}$/);
    const lost = await task(taskId);
    expect(lost).toMatchObject({ status: 'stream_lost', close_code: 0, persistent: true });
    expect(lost.health.stream_lost_since).toBeGreaterThanOrEqual(diedAt - 1000);

    const backAt = Date.now();
    camera.start();
    await noSignal(page).waitFor({ state: 'detached', ...POLL });
    const signalAfterS = (Date.now() - backAt) / 1000;
    expect(await task(taskId)).toMatchObject({ status: 'running', health: { stream_lost_since: null } });
    // Playing again: the annotated video's clock moves on by a second from where it stands now.
    const video = page.getByLabel('Annotated video of Dock');
    const playhead = () =>
      video.evaluate((element) => (element as HTMLVideoElement).currentTime).catch(() => -1);
    const from = await playhead();
    await expect.poll(playhead, POLL).toBeGreaterThan(from + 1);
    const playingAfterS = (Date.now() - backAt) / 1000;
    // The figures for the note; the goals (5 s each) are judged there, not on a loaded test machine.
    console.log(
      `no signal shown ${shownAfterS.toFixed(1)} s after the camera died; signal back ${signalAfterS.toFixed(1)} s and video playing ${playingAfterS.toFixed(1)} s after it returned`,
    );
    await page.close();
  }, 120_000);

  it('starts again after it was closed, in one click, with its name, region and persistence', async () => {
    await c.api('DELETE', `/api/task/${taskId}`);
    // ffmpeg's RTMP server serves one client and ends with it: a fresh one for the new task.
    await camera.kill();
    camera.start();
    const page = await c.open('/tasks');
    await page.getByRole('button', { name: 'Start again: Dock, with the settings it had' }).click();
    await page.waitForURL(/\/live\//, POLL);
    const again = await task(page.url().split('/').pop() ?? '');
    expect(again.task_id).not.toBe(taskId);
    expect(again).toMatchObject({
      name: 'Dock',
      status: 'running',
      persistent: true,
      video_url: camera.url,
      app_ids: ['motion'],
      app_configs: [{ app_id: 'motion', polygon: REGION }],
    });
    expect(await task(taskId)).toMatchObject({ status: 'closed', close_code: 1 });
    await page.close();
  }, 120_000);
});
