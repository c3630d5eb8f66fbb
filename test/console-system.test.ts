import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { taskTitle } from '../renderer/src/tasks/title';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { VIDEO } from './helpers/fixtures';

/*
 * The system page and the header in Chromium, against an engine (its own process, serving the built
 * console of `npm run build`) with one camera analysed.
 */

/** How long the page may take to show something (a loaded machine is slow, never wrong). */
const POLL = { timeout: 20_000 };

let c: ConsoleEngine;
let task: TaskView;

const open = (path: string, size: { width: number; height: number }, language = 'en') =>
  c.open(path, { ...size, language });

beforeAll(async () => {
  c = await startConsoleEngine('console-system');
  await c.installExample();
  const started = await c.api<{ task_id: string }>('POST', '/api/task', {
    zapk_id: 'coco-yolox-nano',
    app_ids: ['person'],
    video_url: VIDEO,
    device_id: 'gate-1',
  });
  task = await c.api<TaskView>('GET', `/api/task/${started.task_id}`);
}, 120_000);

afterAll(async () => c?.stop());

describe('the header', () => {
  it('keeps the screens on one row at 1024 and 1280 px, in English and Chinese', async () => {
    for (const width of [1024, 1280])
      for (const language of ['en', 'zh-CN']) {
        const page = await open('/system', { width, height: 700 }, language);
        const links = page.getByRole('navigation').getByRole('link');
        await expect.poll(() => links.count(), POLL).toBe(10);
        const tops = await links.evaluateAll((all) => all.map((link) => link.getBoundingClientRect().top));
        expect(new Set(tops).size, `${width} px, ${language}: link rows`).toBe(1);
        const header = await page.locator('.app-header').boundingBox();
        expect(header?.height, `${width} px, ${language}: header height`).toBeLessThan(56);
        // Every link is on the screen: none scrolled out of the row's view.
        const overflow = await page
          .locator('.nav-list')
          .evaluate((list) => list.scrollWidth - list.clientWidth);
        expect(overflow, `${width} px, ${language}: link row overflow`).toBeLessThanOrEqual(0);
        await page.close();
      }
  }, 60_000);

  it('keeps theme, language and signing out in a menu that Escape closes', async () => {
    const page = await open('/system', { width: 1280, height: 720 });
    const menu = page.locator('details.account-menu');
    const isOpen = () => menu.evaluate((details) => (details as HTMLDetailsElement).open);
    await menu.locator('summary').click();
    await menu.getByText('Signed in as admin').waitFor(POLL);
    await menu.getByRole('button', { name: 'Sign out' }).waitFor();
    await menu.getByRole('combobox', { name: 'Language' }).selectOption('zh-CN');
    await page.getByRole('heading', { name: '系统' }).waitFor(POLL);
    await page.keyboard.press('Escape');
    expect(await isOpen()).toBe(false);
    await menu.locator('summary').click();
    expect(await isOpen()).toBe(true);
    await page.getByRole('heading', { name: '系统' }).click();
    expect(await isOpen()).toBe(false);
    await page.close();
  });
});

describe('the system page', () => {
  it('shows the machine, the model and the camera, with histories that survive leaving the page', async () => {
    const page = await open('/system', { width: 1280, height: 720 });
    await page.getByRole('heading', { name: 'System' }).waitFor(POLL);
    const models = page.getByRole('table', { name: /Each loaded model/ });
    const model = models.getByRole('row', { name: /coco-yolox-nano\/yolox-nano/ });
    await model.waitFor(POLL);
    expect(await model.getByRole('cell').nth(0).textContent()).toBe('CPU');
    const inference = Number(await model.getByRole('cell').nth(1).textContent());
    expect(inference).toBeGreaterThan(0);
    const decoding = page.getByRole('region', { name: 'Video decoding' });
    expect(await decoding.textContent()).toContain('New streams: software (CPU)');

    const cameras = page.getByRole('table', { name: /Each running camera/ });
    const camera = cameras.getByRole('row', { name: new RegExp(taskTitle(task)) });
    await camera.waitFor(POLL);
    await expect
      .poll(async () => Number(await camera.getByRole('cell').nth(0).textContent()), POLL)
      .toBeGreaterThan(0);
    // Readings every 2 s: a line has several points after a few of them.
    const line = page.getByRole('img', {
      name: new RegExp(`Analysed frames per second of ${taskTitle(task)}`),
    });
    const points = () => line.locator('polyline').first().getAttribute('points');
    await expect.poll(async () => (await points())?.split(' ').length ?? 0, POLL).toBeGreaterThanOrEqual(3);
    const before = ((await points()) ?? '').split(' ').length;

    await page.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'System' }).click();
    await line.waitFor(POLL);
    expect(((await points()) ?? '').split(' ').length).toBeGreaterThanOrEqual(before);

    const cpu = page.getByRole('region', { name: 'CPU' });
    expect(await cpu.textContent()).toMatch(/% of the machine \(\d+ cores\)/);
    const disk = page.getByRole('region', { name: 'Data disk' });
    expect(await disk.textContent()).toMatch(/Engine data: [\d.]+ [kMG]B/);
    await page.close();
  }, 90_000);

  it('lists the recent changes from the audit trail, in English and Chinese', async () => {
    const page = await open('/system', { width: 1280, height: 720 });
    const changes = page.getByRole('table', { name: 'Who changed what, newest first' });
    const row = async (action: string) => {
      const found = changes.getByRole('row', { name: new RegExp(action) });
      await found.waitFor(POLL);
      // When, who (user and address), on what, result; the change itself heads the row.
      return (await found.getByRole('cell').allTextContents()).slice(1);
    };
    expect(await row('Task started')).toEqual(['admin127.0.0.1', taskTitle(task), 'Done']);
    expect(await row('Package installed')).toEqual([
      'admin127.0.0.1',
      'coco-yolox-nano · installed 1.0.0',
      'Done',
    ]);
    expect(await row('Signed in')).toEqual(['admin127.0.0.1', '–', 'Done']);
    await page.close();

    const zh = await open('/system', { width: 1280, height: 720 }, 'zh-CN');
    const zhChanges = zh.getByRole('table', { name: '谁更改了什么，最新的在前' });
    await zhChanges.getByRole('row', { name: /启动任务/ }).waitFor(POLL);
    await zh.close();
  }, 60_000);
});
