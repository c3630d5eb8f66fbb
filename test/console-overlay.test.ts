import { join, resolve } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskCounts, TaskView } from '../engine/tasks/schema';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { VIDEO } from './helpers/fixtures';

/*
 * Overlays to trust (issue 34, points 4, 6 and 9) in Chromium, against an engine in its own process
 * serving the built console: a counting line's direction chosen in the region editor, saved on the
 * task and drawn as an arrow; the line's counts and the zone's occupancy shown beside the video as
 * GET /api/task/{id}/counts answers them; a click on the letterbox beside the frame putting the point
 * on the frame's edge. Screenshots (1280x720) go to test-output/console/overlay-*.png.
 */

const ROOT = resolve(import.meta.dirname, '..');
const SHOTS = join(ROOT, 'test-output', 'console');
const POLL = { timeout: 30_000 };
/** vtest.avi's frame size: what the engine decodes and polygons are in. */
const SOURCE = { width: 768, height: 576 };
/** Bottom to top at x = 320: side A is left of it on the frame, side B right (the walkers cross it). */
const LINE = [
  [320, 576],
  [320, 180],
];
const WALKWAY = [
  [0, 200],
  [768, 200],
  [768, 576],
  [0, 576],
];

let c: ConsoleEngine;
let taskId: string;
let page: Page;

beforeAll(async () => {
  c = await startConsoleEngine('console-overlay');
  await c.installExample();
  ({ task_id: taskId } = await c.api<{ task_id: string }>('POST', '/api/task', {
    zapk_id: 'coco-yolox-nano',
    // Two apps watching persons: the AI video draws one box and one tag per person for both.
    app_ids: ['loiter', 'person'],
    video_url: VIDEO,
    name: 'Walkway',
    app_configs: [{ app_id: 'loiter', polygon: LINE, zones: [{ name: 'walkway', polygon: WALKWAY }] }],
  }));
  page = await c.open(`/live/${taskId}`);
  await page.getByRole('application').locator('canvas').first().waitFor(POLL);
}, 180_000);

afterAll(async () => {
  await c?.api('DELETE', `/api/task/${taskId}`).catch(() => undefined);
  await c?.stop();
});

const loiterConfig = async () =>
  (await c.api<TaskView>('GET', `/api/task/${taskId}`)).app_configs.find(
    (config) => config.app_id === 'loiter',
  );

/** The frame's place on the page: the letterboxed picture under the canvas. */
async function frameBox(surface: Locator) {
  const box = await surface.locator('.stage-frame').boundingBox();
  if (!box) throw new Error('the frame is not on the page');
  return box;
}

/**
 * Whether the editor's canvas has something opaque drawn at a page point: the canvas is clear where
 * nothing is drawn, whatever the video under it shows, and a zone's tint is faint.
 */
async function drawnAt(surface: Locator, x: number, y: number): Promise<boolean> {
  return surface
    .locator('canvas')
    .first()
    .evaluate(
      (canvas, [px, py]) => {
        const element = canvas as HTMLCanvasElement;
        const rect = element.getBoundingClientRect();
        const ratio = element.width / rect.width;
        const context = element.getContext('2d');
        const pixel = context?.getImageData(
          Math.round((px - rect.left) * ratio),
          Math.round((py - rect.top) * ratio),
          1,
          1,
        );
        return (pixel?.data[3] ?? 0) > 200;
      },
      [x, y] as const,
    );
}

describe('a counting line in the Live view', () => {
  it('takes its direction from the editor, saves it on the task and draws its arrow on that side', async () => {
    const surface = page.getByRole('application');
    const directions = page.getByRole('radiogroup', { name: 'Crossings counted' });
    await directions.waitFor(POLL);
    expect(await directions.getByRole('radio', { name: 'Both ways' }).isChecked()).toBe(true);

    /** The arrow's shaft beside the line's middle: on side B (right of this line) and side A. */
    const sides = async () => {
      const box = await frameBox(surface);
      const mid = {
        x: box.x + (320 * box.width) / SOURCE.width,
        y: box.y + (378 * box.height) / SOURCE.height,
      };
      return { a: await drawnAt(surface, mid.x - 16, mid.y), b: await drawnAt(surface, mid.x + 16, mid.y) };
    };
    await expect.poll(sides, POLL).toEqual({ a: true, b: true });

    await directions.getByRole('radio', { name: 'A → B' }).check();
    await expect.poll(async () => (await loiterConfig())?.line_direction, POLL).toBe('in');
    await expect.poll(sides, POLL).toEqual({ a: false, b: true });
    await page.screenshot({ path: join(SHOTS, 'overlay-direction.png') });

    await directions.getByRole('radio', { name: 'B → A' }).check();
    await expect.poll(async () => (await loiterConfig())?.line_direction, POLL).toBe('out');
    await expect.poll(sides, POLL).toEqual({ a: true, b: false });
    // The line itself is as it was.
    expect((await loiterConfig())?.polygon).toEqual(LINE);

    // Back to both ways, which the next test counts.
    await directions.getByRole('radio', { name: 'Both ways' }).check();
    await expect.poll(async () => (await loiterConfig())?.line_direction, POLL).toBe('both');
  }, 120_000);

  it('shows the counts per direction and the zone occupancy as /counts answers them', async () => {
    const counts = () => c.api<TaskCounts>('GET', `/api/task/${taskId}/counts`);
    // A walker crosses the line a few seconds into the video.
    await expect
      .poll(
        async () => {
          const line = (await counts()).apps[0]?.line;
          return (line?.in ?? 0) + (line?.out ?? 0);
        },
        { timeout: 90_000 },
      )
      .toBeGreaterThan(0);
    const panel = page.getByRole('region', { name: 'Counts' });
    const expected = (answer: TaskCounts) => {
      const app = answer.apps[0];
      return [
        `Loitering: A → B ${app?.line?.in} · B → A ${app?.line?.out}`,
        `Loitering · walkway: ${app?.zones?.walkway?.count} inside`,
      ];
    };
    // Both change as people walk: the page and the engine must agree at some moment, read back to back.
    await expect
      .poll(async () => {
        const shown = await panel.getByRole('listitem').allTextContents();
        return JSON.stringify(shown) === JSON.stringify(expected(await counts()))
          ? 'equal'
          : JSON.stringify(shown);
      }, POLL)
      .toBe('equal');
    await page.screenshot({ path: join(SHOTS, 'overlay-counts.png') });
  }, 150_000);
});

describe('the region editor', () => {
  it('puts a click on the letterbox beside the frame on the frame’s nearest edge', async () => {
    const surface = page.getByRole('application');
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await expect.poll(async () => (await loiterConfig())?.polygon, POLL).toEqual([]);
    const box = await frameBox(surface);
    const stage = (await surface.boundingBox()) as { x: number; width: number };
    // The surface is wider than the 4:3 frame: bars left and right.
    expect(box.x - stage.x).toBeGreaterThan(20);
    // Left of the frame at its middle height, then on the frame's right part.
    await page.mouse.click(box.x - 12, box.y + box.height / 2);
    await page.mouse.click(box.x + box.width * 0.75, box.y + box.height * 0.25);
    await expect.poll(async () => (await loiterConfig())?.polygon?.length, POLL).toBe(2);
    const [first] = (await loiterConfig())?.polygon ?? [];
    expect(first?.[0]).toBe(0);
    expect(Math.abs((first?.[1] ?? 0) - SOURCE.height / 2)).toBeLessThanOrEqual(2);
    await page.screenshot({ path: join(SHOTS, 'overlay-letterbox.png') });
  }, 60_000);
});
