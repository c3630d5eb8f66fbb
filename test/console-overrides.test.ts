import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { VIDEO } from './helpers/fixtures';

/*
 * Per-camera rule overrides in the console (issue 34, point 11), in Chromium against an engine in its
 * own process: two cameras on the built-in motion app whose rule lets no box through (min_pixel
 * 5000), and this camera's rule of one of them set to min_pixel 16 in its task editor. Only that
 * camera's events come; the rule editor says one camera overrides the app's rule.
 */

const ROOT = join(import.meta.dirname, '..');
const SHOTS = join(ROOT, 'test-output', 'console');
const POLL = { timeout: 60_000 };
const MOTION = { class_id: '0', name: 'motion', color: '#ffcc00', threshold: 0.5, max_pixel: 0 };

let c: ConsoleEngine;
let gateA: string;
let gateB: string;

const start = async (name: string) =>
  (
    await c.api<{ task_id: string }>('POST', '/api/task', {
      name,
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
    })
  ).task_id;
const messages = async (taskId: string) =>
  (
    await c.api<{ items: Array<{ event: string }> }>('GET', `/api/task/${taskId}/events?limit=500`)
  ).items.filter((item) => item.event === 'message').length;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  c = await startConsoleEngine('console-overrides', { engineArgs: ['--analysis-fps', '4'] });
  await c.api('PUT', '/api/zapk/builtin/app/motion', {
    rule: { interval: 1, classes: [{ ...MOTION, min_pixel: 5000 }] },
  });
  gateA = await start('Gate A');
  gateB = await start('Gate B');
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

describe("this camera's rule", () => {
  it('sets an override for one of two cameras in the task editor: only its events change', async () => {
    const page = await c.open(`/tasks/${gateA}`);
    const rule = page.getByRole('group', { name: "This camera's rule: Motion" });
    await rule.waitFor(POLL);
    const least = rule.getByLabel('Least size of motion (px)');
    // The app's values are the placeholders; nothing is this camera's yet.
    expect(await least.getAttribute('placeholder')).toBe('5000');
    expect(await rule.getByLabel('Threshold of motion').getAttribute('placeholder')).toBe('0.5');
    expect(await rule.locator('.override-badge').count()).toBe(0);
    await least.fill('16');
    await rule.locator('.override-badge').first().waitFor();
    expect(await rule.locator('.override-set').count()).toBe(1);
    await rule
      .getByRole('button', { name: "Reset Least size of motion (px) to the app's value 5000" })
      .waitFor();
    await rule.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'overrides-task-editor-en.png') });
    const before = { a: await messages(gateA), b: await messages(gateB) };
    expect(before).toEqual({ a: 0, b: 0 });
    await page.getByRole('button', { name: 'Apply to the running task' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached', ...POLL });
    expect((await c.api<TaskView>('GET', `/api/task/${gateA}`)).rule_overrides).toEqual({
      motion: { classes: [{ class_id: '0', min_pixel: 16 }] },
    });
    expect((await c.api<TaskView>('GET', `/api/task/${gateB}`)).rule_overrides).toEqual({});

    await expect.poll(() => messages(gateA), POLL).toBeGreaterThanOrEqual(2);
    expect(await messages(gateB)).toBe(0);

    // The rule editor says how many cameras keep their own values.
    const packages = await c.open('/packages');
    await packages.getByRole('button', { name: 'Edit the rule of Motion' }).first().click();
    await packages.getByText('Overridden on 1 camera(s)').waitFor(POLL);
    await packages.close();

    // Reset in the editor: the camera follows the app's rule again.
    const again = await c.open(`/tasks/${gateA}`);
    const ruleAgain = again.getByRole('group', { name: "This camera's rule: Motion" });
    await ruleAgain
      .getByRole('button', { name: "Reset Least size of motion (px) to the app's value 5000" })
      .click();
    expect(await ruleAgain.locator('.override-badge').count()).toBe(0);
    await again.getByRole('button', { name: 'Apply to the running task' }).click();
    await again.getByRole('dialog').waitFor({ state: 'detached', ...POLL });
    expect((await c.api<TaskView>('GET', `/api/task/${gateA}`)).rule_overrides).toEqual({});
    await again.close();
    await page.close();
  }, 240_000);

  it('reads in Chinese', async () => {
    await c.api('PUT', `/api/task/${gateB}`, {
      rule_overrides: { motion: { interval: 30, classes: [{ class_id: '0', threshold: 0.6 }] } },
    });
    const page = await c.open(`/tasks/${gateB}`, { language: 'zh-CN' });
    const rule = page.getByRole('group', { name: '本摄像头的规则：移动侦测' });
    await rule.waitFor(POLL);
    expect(await rule.locator('.override-set').count()).toBe(2);
    await rule.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'overrides-task-editor-zh-CN.png') });
    await page.close();
  }, 120_000);
});
