import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { VIDEO } from './helpers/fixtures';

/*
 * The live view's heatmap toggle in Chromium against an engine in its own process serving the built
 * console: the heatmap (E.13b) replaces the video while shown, refreshes, and resets.
 */

const POLL = { timeout: 30_000 };

let c: ConsoleEngine;
let page: Page;
let taskId: string;

beforeAll(async () => {
  c = await startConsoleEngine('console-heatmap', { engineArgs: ['--analysis-fps', '5'] });
  const body = { name: 'Yard', zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO };
  taskId = (await c.api<{ task_id: string }>('POST', '/api/task', body)).task_id;
  page = await c.open(`/live/${taskId}`);
}, 120_000);

afterAll(async () => c?.stop());

describe('the live view’s heatmap', () => {
  it('shows the task’s heatmap instead of the video while toggled, refreshed, and back', async () => {
    const video = page.getByLabel('AI video of task Yard');
    await video.waitFor(POLL);
    await page.getByRole('checkbox', { name: 'Heatmap' }).check();
    const heatmap = page.getByRole('img', { name: 'Heatmap of task Yard' });
    // The engine's PNG, 640 px wide by default (the source is 768).
    await expect
      .poll(() => heatmap.evaluate((img) => (img as HTMLImageElement).naturalWidth), POLL)
      .toBe(640);
    expect(await video.count()).toBe(0);
    const first = await heatmap.getAttribute('src');
    expect(first).toContain(`/api/task/${taskId}/heatmap?refresh=`);
    expect(first).toContain('token=');
    await expect.poll(() => heatmap.getAttribute('src'), POLL).not.toBe(first);

    await page.getByRole('checkbox', { name: 'Heatmap' }).uncheck();
    await video.waitFor(POLL);
    expect(await heatmap.count()).toBe(0);
  }, 90_000);

  it('resets the heat on the engine from its button', async () => {
    await page.getByRole('checkbox', { name: 'Heatmap' }).check();
    const sum = async () => {
      const grid = await c.api<{ cells: number[] }>('GET', `/api/task/${taskId}/heatmap/grid`);
      return grid.cells.reduce((a, b) => a + b, 0);
    };
    await expect.poll(sum, POLL).toBeGreaterThan(50);
    const deleted = page.waitForResponse(
      (response) => response.request().method() === 'DELETE' && response.url().endsWith('/heatmap'),
    );
    await page.getByRole('button', { name: 'Reset heatmap' }).click();
    expect((await deleted).status()).toBe(200);
    expect(await sum()).toBeLessThan(50);
  }, 60_000);
});
