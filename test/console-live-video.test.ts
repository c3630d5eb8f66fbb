import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presetSession } from './helpers/browser';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { VIDEO } from './helpers/fixtures';

/*
 * The live view's video in Chromium: fragmented MP4 over the engine's WebSocket into Media Source
 * Extensions (not HLS), played at the live edge. How far behind the camera that is, glass to glass,
 * is measured by `npm run bench:live`; here only that playback stays near the newest frame it has.
 */

const POLL = { timeout: 30_000 };

let c: ConsoleEngine;
let taskId: string;

beforeAll(async () => {
  c = await startConsoleEngine('console-live-video');
  const body = { name: 'Yard', zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO };
  taskId = (await c.api<{ task_id: string }>('POST', '/api/task', body)).task_id;
}, 120_000);

afterAll(async () => c?.stop());

describe('the live view’s video', () => {
  it('plays fragmented MP4 from the WebSocket at the live edge, without HLS', async () => {
    const page = await c.browser.newPage();
    let fragments = 0;
    const playlists: string[] = [];
    page.on('websocket', (socket) => socket.on('framereceived', () => fragments++));
    page.on('request', (request) => {
      if (request.url().includes('.m3u8')) playlists.push(request.url());
    });
    await presetSession(page, c.token);
    await page.goto(`${c.engine.url}/#/live/${taskId}`);
    const video = page.getByLabel('AI video of task Yard');
    const position = () =>
      video.evaluate((element) => {
        const v = element as HTMLVideoElement;
        const end = v.buffered.length > 0 ? v.buffered.end(v.buffered.length - 1) : 0;
        return { time: v.currentTime, behind: end - v.currentTime, paused: v.paused };
      });
    await expect.poll(async () => (await position()).time, POLL).toBeGreaterThan(1);
    const samples = [];
    for (let i = 0; i < 10; i++) {
      samples.push(await position());
      await page.waitForTimeout(200);
    }
    expect(samples.every((sample) => !sample.paused)).toBe(true);
    // The player jumps to the newest frame when it is more than 0.3 s behind it.
    expect(Math.max(...samples.map((sample) => sample.behind))).toBeLessThan(0.5);
    expect(fragments).toBeGreaterThan(20);
    expect(playlists).toEqual([]);
    await page.close();
  }, 90_000);

  it('trims played video behind the live edge without a page error (no remove() while updating)', async () => {
    const page = await c.browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await presetSession(page, c.token);
    await page.goto(`${c.engine.url}/#/live/${taskId}`);
    const video = page.getByLabel('AI video of task Yard');
    // The player keeps 10 s behind playback: past that, what is older is removed from the buffer.
    const bufferedFrom = () =>
      video.evaluate((element) => {
        const v = element as HTMLVideoElement;
        return { start: v.buffered.length > 0 ? v.buffered.start(0) : 0, time: v.currentTime };
      });
    // Fragments carry the stream's own times: the buffer starts wherever the first one was.
    await expect.poll(async () => (await bufferedFrom()).time, { timeout: 30_000 }).toBeGreaterThan(0);
    const first = (await bufferedFrom()).start;
    await expect
      .poll(async () => (await bufferedFrom()).start, { timeout: 90_000, interval: 1000 })
      .toBeGreaterThan(first + 1);
    const { start, time } = await bufferedFrom();
    expect(time - start).toBeLessThanOrEqual(11);
    expect(errors).toEqual([]);
    await page.close();
  }, 150_000);
});
