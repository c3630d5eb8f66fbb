import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, presetSession } from './helpers/browser';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { installExamplePackage } from './helpers/example-package';
import { message, Receiver } from './helpers/receiver';

/*
 * The events screen in Chromium. Defect 9a: "Send again" delivers the event again, and the row then
 * shows the state that delivery ended in and the attempts counted over the redelivery, not the
 * "1 attempt(s)" it had. Also its 320 px thumbnails from the engine, its camera titles, and its filter
 * kept over leaving the screen and a reload. A real receiver over HTTP; the built console served by
 * the engine.
 */

const CONSOLE = join(resolve(import.meta.dirname, '..'), 'out', 'renderer');
const POLL = { timeout: 20_000 };

let t: TestEngine;
let rx: Receiver;
let browser: Browser;
let page: Page;
let task: string;

beforeAll(async () => {
  expect(existsSync(join(CONSOLE, 'index.html')), 'the console is built (npm run build)').toBe(true);
  rx = await Receiver.start();
  t = await startTestEngine(undefined, CONSOLE);
  expect(await installExamplePackage(t)).toBe(200);
  const answer = await t.call('POST', '/api/task', {
    json: { name: 'Gate A', mode: 'image', zapk_id: 'coco-yolox-nano', app_ids: ['person'] },
  });
  task = (answer.body.data as { task_id: string }).task_id;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await presetSession(page, t.token);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await rx?.close();
});

describe('Send again (defect 9a)', () => {
  it('shows the new attempt count and the state once the redelivery is done', async () => {
    await page.goto(`${t.engine.url}/#/events`);
    await page.getByRole('status').filter({ hasText: 'Live feed connected' }).waitFor(POLL);
    const event = message(task, 1);
    const snapshot = await sharp({ create: { width: 1280, height: 720, channels: 3, background: '#2060a0' } })
      .jpeg()
      .toBuffer();
    if (event.event === 'message')
      (event.data.rules[0] as { image: string }).image = snapshot.toString('base64');
    t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, event);
    await rx.waitFor('the first delivery', () => rx.accepted.length === 1);

    const row = page.getByRole('article', { name: 'Event 1 of Person detection' });
    const delivery = row.locator('.event-delivery > *');
    await expect
      .poll(() => delivery.allTextContents(), POLL)
      .toEqual(['Delivered', '1 attempt', 'Send again']);
    // The row shows the engine's 320 px thumbnail, not the 1280 px snapshot.
    const thumb = row
      .getByRole('button', { name: 'Open the snapshot of Person detection: person' })
      .locator('img');
    await expect
      .poll(() => thumb.evaluate((image) => (image as HTMLImageElement).naturalWidth), POLL)
      .toBe(320);
    // The camera goes by its title, in the row and in the filter.
    expect(await row.locator('.event-line strong').textContent()).toBe('Gate A');
    expect(
      await page.getByRole('combobox', { name: 'Task' }).locator(`option[value="${task}"]`).textContent(),
    ).toBe('Gate A');

    // The operator clicks a moment later (the engine's clock is a manual one here).
    t.advance(1000);
    await row.getByRole('button', { name: 'Send event 1 again' }).click();
    await rx.waitFor('the second delivery', () => rx.accepted.length === 2);
    expect(rx.accepted.map((request) => (request.body as { seq: number }).seq)).toEqual([1, 1]);
    await expect
      .poll(() => delivery.allTextContents(), POLL)
      .toEqual(['Delivered', '2 attempts', 'Send again']);
  });

  it('keeps its task filter when the operator leaves the screen and when the page is reloaded', async () => {
    const filter = () => page.getByRole('combobox', { name: 'Task' });
    await filter().selectOption(task);
    await page.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await expect.poll(() => page.getByRole('combobox', { name: 'Task' }).count(), POLL).toBe(0);
    await page.getByRole('navigation').getByRole('link', { name: 'Events' }).click();
    await expect.poll(() => filter().inputValue(), POLL).toBe(task);
    await page.reload();
    await filter()
      .locator(`option[value="${task}"]`)
      .waitFor({ state: 'attached', ...POLL });
    expect(await filter().inputValue()).toBe(task);
  });
});
