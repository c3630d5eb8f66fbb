import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { VIDEO } from './helpers/fixtures';

/*
 * The live wall in Chromium against an engine in its own process serving the built console, with
 * five cameras (the fixture video, analysed at 2 fps to spare the machine): snapshots beyond the
 * decoding budget, the grid size remembered, a focused camera playing its video, paging.
 */

const POLL = { timeout: 30_000 };
const NAMES = ['Dock 1', 'Dock 2', 'Dock 3', 'Dock 10', 'Gate'];

let c: ConsoleEngine;
let page: Page;

beforeAll(async () => {
  c = await startConsoleEngine('console-wall', { engineArgs: ['--analysis-fps', '2'] });
  for (const name of NAMES)
    await c.api('POST', '/api/task', { name, zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO });
  page = await c.open('/wall');
}, 120_000);

afterAll(async () => c?.stop());

const tileNames = () => page.locator('.wall-name').allTextContents();

/** The tiles whose box is not wholly inside a window of that size (with their boxes, to read a failure). */
const tilesOutside = (width: number, height: number) =>
  page.locator('.wall-tile').evaluateAll(
    (tiles, { w, h }) =>
      tiles
        .map((tile) => tile.getBoundingClientRect())
        .filter((box) => box.left < 0 || box.top < 0 || box.right > w + 0.5 || box.bottom > h + 0.5)
        .map((box) => `${box.left},${box.top} - ${box.right},${box.bottom}`),
    { w: width, h: height },
  );

describe('the live wall', () => {
  it('shows nine to a page as refreshing snapshots, sorted by name, and remembers the size', async () => {
    await page.getByRole('heading', { name: 'Live wall' }).waitFor(POLL);
    await page.getByRole('radio', { name: '9', exact: true }).check();
    await expect.poll(tileNames, POLL).toEqual(['Dock 1', 'Dock 2', 'Dock 3', 'Dock 10', 'Gate']);
    expect(await page.locator('.wall-grid video').count()).toBe(0);
    const picture = page.getByRole('img', { name: 'Latest picture of Dock 2' });
    // The source is 768 px wide; the wall asks for 480.
    await expect
      .poll(() => picture.evaluate((img) => (img as HTMLImageElement).naturalWidth), POLL)
      .toBe(480);
    await page.reload();
    await expect.poll(() => page.getByRole('radio', { name: '9', exact: true }).isChecked(), POLL).toBe(true);
  }, 60_000);

  it('focuses a camera on click, playing its annotated video, and goes back with Escape', async () => {
    await page.getByRole('button', { name: 'Watch Dock 3' }).click();
    await expect.poll(tileNames, POLL).toEqual(['Dock 3']);
    const video = page.getByLabel('Annotated video of Dock 3');
    await expect
      .poll(() => video.evaluate((element) => (element as HTMLVideoElement).currentTime), POLL)
      .toBeGreaterThan(0.5);
    await page.keyboard.press('Escape');
    await expect.poll(tileNames, POLL).toEqual(['Dock 1', 'Dock 2', 'Dock 3', 'Dock 10', 'Gate']);
  }, 90_000);

  // The audit found the 2x2 wall's bottom tiles ending at y = 1197 px at 1920x1080.
  it.each([
    [1280, 720],
    [1920, 1080],
  ])(
    'fits every tile of a 2x2 and a 3x3 wall inside a %dx%d window, without scrolling',
    async (width, height) => {
      await page.setViewportSize({ width, height });
      for (const size of ['4', '9']) {
        await page.getByRole('radio', { name: size, exact: true }).check();
        await expect
          .poll(async () => (await tileNames()).length, POLL)
          .toBe(Math.min(Number(size), NAMES.length));
        expect(await tilesOutside(width, height)).toEqual([]);
        expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(height);
      }
    },
    60_000,
  );

  it('goes full screen black, without the toolbar, every tile on the screen, each with a clock', async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByRole('radio', { name: '4', exact: true }).check();
    await page.getByRole('button', { name: 'Full screen' }).click();
    await expect.poll(() => page.evaluate(() => document.fullscreenElement?.className), POLL).toBe('wall');
    expect(await page.locator('.wall .toolbar').isVisible()).toBe(false);
    expect(await page.locator('.wall').evaluate((wall) => getComputedStyle(wall).backgroundColor)).toBe(
      'rgb(0, 0, 0)',
    );
    const screen = await page.evaluate(() => ({ width: innerWidth, height: innerHeight }));
    expect(await tilesOutside(screen.width, screen.height)).toEqual([]);
    const clocks = await page.locator('.wall-clock').allTextContents();
    expect(clocks).toHaveLength(4);
    for (const clock of clocks) expect(clock).toMatch(/^\d{2}:\d{2}:\d{2}$/);
    await page.evaluate(() => document.exitFullscreen());
    await expect.poll(() => page.locator('.wall .toolbar').isVisible(), POLL).toBe(true);
  }, 60_000);

  it('pages one camera at a time at size 1', async () => {
    await page.getByRole('radio', { name: '1', exact: true }).check();
    await expect.poll(tileNames, POLL).toEqual(['Dock 1']);
    await page.getByText('Page 1 of 5').waitFor(POLL);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(tileNames, POLL).toEqual(['Dock 2']);
  }, 60_000);
});
