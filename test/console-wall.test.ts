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

  it('pages one camera at a time at size 1', async () => {
    await page.getByRole('radio', { name: '1', exact: true }).check();
    await expect.poll(tileNames, POLL).toEqual(['Dock 1']);
    await page.getByText('Page 1 of 5').waitFor(POLL);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(tileNames, POLL).toEqual(['Dock 2']);
  }, 60_000);
});
