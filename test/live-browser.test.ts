import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './helpers/browser';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { installExamplePackage } from './helpers/example-package';

/**
 * The AI video in a real browser: headless Chromium (Debian's) plays the engine's HLS with hls.js,
 * the player the console uses, from a page of the engine's own origin, authenticated by ?token=
 * alone (the playlist's segment URIs must carry it).
 */

const HLS_JS = resolve(import.meta.dirname, '../node_modules/hls.js/dist/hls.min.js');

let t: TestEngine;
let browser: Browser | undefined;

beforeAll(async () => {
  t = await startTestEngine();
  expect(await installExamplePackage(t)).toBe(200);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

declare global {
  interface Window {
    playerErrors: string[];
  }
}

describe('AI video in the browser', () => {
  it('plays in Chromium with hls.js: the video time advances', async () => {
    const started = await t.call('POST', '/api/task', {
      json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: VIDEO },
    });
    const taskId = (started.body.data as { task_id: string }).task_id;
    const live = await t.call('POST', `/api/task/${taskId}/ailive`, { json: { app_ids: ['person'] } });
    expect(live.body.code).toBe(0);
    const hlsUrl = `${(live.body.data as { hls_url: string }).hls_url}?token=${encodeURIComponent(t.token)}`;

    const page = await (browser as Browser).newPage();
    const statuses: number[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/livestream/')) statuses.push(response.status());
    });
    await page.route(`${t.engine.url}/player.html`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><video id="v" muted playsinline></video>',
      }),
    );
    await page.goto(`${t.engine.url}/player.html`);
    await page.addScriptTag({ path: HLS_JS });
    await page.evaluate((url) => {
      const video = document.getElementById('v') as HTMLVideoElement;
      const Hls = (window as unknown as { Hls: typeof import('hls.js').default }).Hls;
      window.playerErrors = [];
      const hls = new Hls({ lowLatencyMode: true });
      hls.on(Hls.Events.ERROR, (_event, data) => window.playerErrors.push(`${data.type}: ${data.details}`));
      hls.on(Hls.Events.MANIFEST_PARSED, () => void video.play());
      hls.loadSource(url);
      hls.attachMedia(video);
    }, hlsUrl);

    const currentTime = () =>
      page.evaluate(() => (document.getElementById('v') as HTMLVideoElement).currentTime);
    await page.waitForFunction(
      () => (document.getElementById('v') as HTMLVideoElement).currentTime > 1,
      null,
      {
        timeout: 30_000,
      },
    );
    const first = await currentTime();
    await page.waitForFunction(
      (since) => (document.getElementById('v') as HTMLVideoElement).currentTime > since + 1,
      first,
      { timeout: 30_000 },
    );
    const size = await page.evaluate(() => {
      const video = document.getElementById('v') as HTMLVideoElement;
      return [video.videoWidth, video.videoHeight];
    });
    expect(size).toEqual([768, 576]);
    expect(
      await page.evaluate(() => window.playerErrors.filter((e) => !e.includes('bufferStalledError'))),
    ).toEqual([]);
    // The playlist and every segment, with the token from the playlist's own URIs.
    expect(statuses.length).toBeGreaterThan(2);
    expect(statuses.every((status) => status === 200)).toBe(true);
    await page.close();
    expect((await t.call('DELETE', `/api/task/${taskId}`)).body.code).toBe(0);
  }, 120_000);
});
