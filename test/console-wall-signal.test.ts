import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { RtmpSource } from './helpers/rtmp-source';

/*
 * A camera that is not an operator's persistent one (an API caller's task, close_code 2 after 5
 * minutes lost) on a 3x3 wall, in Chromium against an engine in its own process: a live RTMP camera
 * (ffmpeg serving the fixture) that dies like a camera losing power says "No signal since" on its
 * tile, never "Running" over a black or frozen picture, and its tile video plays again on its own
 * when it returns. The figures are printed for the note; the bounds here are loose (loaded machine).
 */

const POLL = { timeout: 45_000 };

let c: ConsoleEngine;
let camera: RtmpSource;
let taskId: string;

beforeAll(async () => {
  c = await startConsoleEngine('console-wall-signal', { engineArgs: ['--analysis-fps', '2'] });
  camera = await RtmpSource.create('wall-gate', 100);
  camera.start();
  const started = await c.api<{ task_id: string }>('POST', '/api/task', {
    name: 'Gate',
    zapk_id: 'builtin',
    app_ids: ['motion'],
    video_url: camera.url,
  });
  taskId = started.task_id;
}, 120_000);

afterAll(async () => {
  await camera?.kill();
  await c?.stop();
});

describe('a camera of an API caller on the wall', () => {
  it('says "No signal since" on its tile when its stream dies, not "Running", and plays again when it returns', async () => {
    const page = await c.open('/wall');
    await page.getByRole('radio', { name: '9', exact: true }).check();
    const tile = page.locator('.wall-tile', { has: page.getByText('Gate', { exact: true }) });
    const playhead = () =>
      tile
        .locator('video')
        .last()
        .evaluate((element) => (element as HTMLVideoElement).currentTime)
        .catch(() => -1);
    await expect.poll(playhead, { timeout: 90_000 }).toBeGreaterThan(1);

    const diedAt = Date.now();
    await camera.kill();
    const noSignal = tile.locator('.wall-no-signal');
    await noSignal.waitFor(POLL);
    const shownAfterS = (Date.now() - diedAt) / 1000;
    expect(await noSignal.textContent()).toMatch(/^No signal since \d{2}:\d{2}:\d{2}$/);
    expect(await tile.locator('.wall-caption').textContent()).not.toMatch(/Running/);
    const lost = await c.api<TaskView>('GET', `/api/task/${taskId}`);
    expect(lost).toMatchObject({ status: 'stream_lost', close_code: 0, persistent: false });

    const backAt = Date.now();
    camera.start();
    await noSignal.waitFor({ state: 'detached', ...POLL });
    const signalAfterS = (Date.now() - backAt) / 1000;
    const from = await playhead();
    await expect.poll(playhead, POLL).toBeGreaterThan(from + 1);
    const playingAfterS = (Date.now() - backAt) / 1000;
    console.log(
      `wall tile: no signal shown ${shownAfterS.toFixed(1)} s after the camera died; signal back ${signalAfterS.toFixed(1)} s and tile video playing ${playingAfterS.toFixed(1)} s after it returned`,
    );
    await page.close();
  }, 240_000);
});
