import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, presetSession } from './helpers/browser';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { VIDEO } from './helpers/fixtures';

/*
 * The live view's video in Chromium: fragmented MP4 over the engine's WebSocket into Media Source
 * Extensions (not HLS), played at the live edge. How far behind the camera that is, glass to glass,
 * is measured by `npm run bench:live`; here only that playback stays near the newest frame it has.
 */

const PASSWORD = 'console-live-video-password';
const POLL = { timeout: 30_000 };

let engine: EngineProcess;
let token: string;
let browser: Browser;
let dataDir: string;
let taskId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vc-console-live-'));
  engine = await spawnEngine(join(dataDir, 'data'), PASSWORD);
  token = await signIn(engine.url, PASSWORD);
  taskId = (
    await callApi<{ task_id: string }>(engine.url, token, 'POST', '/api/task', {
      name: 'Yard',
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
    })
  ).task_id;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopEngine(engine);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('the live view’s video', () => {
  it('plays fragmented MP4 from the WebSocket at the live edge, without HLS', async () => {
    const page = await browser.newPage();
    let fragments = 0;
    const playlists: string[] = [];
    page.on('websocket', (socket) => socket.on('framereceived', () => fragments++));
    page.on('request', (request) => {
      if (request.url().includes('.m3u8')) playlists.push(request.url());
    });
    await presetSession(page, token);
    await page.goto(`${engine.url}/#/live/${taskId}`);
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
});
