import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { systemClock } from '../engine/clock';
import type { AlarmPage } from '../engine/contract';
import { EventBus } from '../engine/events/bus';
import { openDb } from '../engine/store/db';
import type { ReviewItemPage } from '../renderer/src/api';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { FIXTURES } from './helpers/fixtures';
import { message } from './helpers/receiver';

/*
 * Alarm review in Chromium over 10,000 stored alarms (written before the engine starts, through the
 * outbox's own write path, each with a real small snapshot; one track each, so each is a review item
 * of its own), against an engine in its own process serving the built console: triage from the
 * keyboard, filters that survive a reload, a marker for new alarms instead of moving rows, and the
 * page's memory while it pages through all of them.
 */

const POLL = { timeout: 30_000 };
const ALARMS = 10_000;
const CAMERAS = [randomUUID(), randomUUID()];

let c: ConsoleEngine;
let page: Page;
const api = <T>(method: string, path: string, body?: unknown) => c.api<T>(method, path, body);

/** The alarms, stored before the engine starts through the outbox's own write path (one transaction). */
async function storeAlarms(dataDir: string): Promise<void> {
  const snapshot = (
    await sharp({ create: { width: 320, height: 180, channels: 3, background: '#406080' } })
      .jpeg()
      .toBuffer()
  ).toString('base64');
  const db = openDb(dataDir);
  const outbox = new Outbox(
    new OutboxRepository(db),
    { listedTaskIds: () => CAMERAS },
    systemClock,
    new EventBus(),
  );
  db.transaction(() => {
    for (let i = 1; i <= ALARMS; i++) {
      const event = message(CAMERAS[i % 2] as string, i);
      if (event.event === 'message') (event.data.rules[0] as { image: string }).image = snapshot;
      outbox.enqueue({ task_id: event.task_id, report_url: '' }, { ...event, timestamp: Date.now() - 1000 });
    }
  })();
  db.close();
}

beforeAll(async () => {
  c = await startConsoleEngine('console-alarms', { prepare: storeAlarms });
  page = await c.open('/alarms');
}, 180_000);

afterAll(async () => c?.stop());

const selectedRow = () => page.locator('.alarm-open[aria-current="true"]');

describe('alarm review', () => {
  it('triages from the keyboard, the reviewed state kept by the engine', async () => {
    await page.getByRole('status').filter({ hasText: '10000 review items' }).waitFor(POLL);
    for (let i = 0; i < 3; i++) await page.keyboard.press('j');
    await page.keyboard.press('k');
    const chosen = await selectedRow().locator('.sub').first().textContent();
    await page.keyboard.press('r');
    await expect.poll(() => selectedRow().locator('.badge').textContent(), POLL).toBe('Reviewed');
    // The row stays where it was, though the filter shows alarms not yet reviewed.
    expect(await selectedRow().locator('.sub').first().textContent()).toBe(chosen);
    // The item and its one alarm.
    expect((await api<ReviewItemPage>('GET', '/api/review/items?reviewed=true')).total).toBe(1);
    expect((await api<AlarmPage>('GET', '/api/alarms?reviewed=true')).total).toBe(1);
    // Stored before clips existed: the item says so and shows its snapshot.
    await page
      .getByText('No clip: clips are off, or this alarm did not come from a video camera.')
      .waitFor(POLL);
    await page.getByRole('img', { name: /^Snapshot of the alarm/ }).waitFor(POLL);
  }, 60_000);

  it('keeps its filter when the page is reloaded', async () => {
    const camera = page.getByLabel('Camera');
    await camera.selectOption(CAMERAS[1] as string);
    await page.getByRole('status').filter({ hasText: '5000 review items' }).waitFor(POLL);
    await page.reload();
    await page.getByRole('status').filter({ hasText: '5000 review items' }).waitFor(POLL);
    expect(await page.getByLabel('Camera').inputValue()).toBe(CAMERAS[1]);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByRole('status').filter({ hasText: '9999 review items' }).waitFor(POLL);
  }, 60_000);

  it('counts a new alarm instead of moving the rows, and shows it when asked', async () => {
    await c.installExample();
    const task = await api<{ task_id: string }>('POST', '/api/task', {
      name: 'Court',
      mode: 'image',
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person'],
    });
    const first = await page.locator('.alarm-row').first().locator('.sub').first().textContent();
    const answer = await fetch(`${c.engine.url}/api/task/${task.task_id}/image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'image/png' },
      body: readFileSync(join(FIXTURES, 'media', 'basketball1.png')),
    });
    expect(((await answer.json()) as { code: number }).code).toBe(0);
    const marker = page.getByRole('button', { name: '1 new: show them' });
    await marker.waitFor(POLL);
    expect(await page.locator('.alarm-row').first().locator('.sub').first().textContent()).toBe(first);
    await marker.click();
    await expect
      .poll(() => page.locator('.alarm-row').first().locator('strong').textContent(), POLL)
      .toBe('Court');
  }, 90_000);

  it('pages through all 10,000 alarms with the page’s memory bounded', async () => {
    const cdp = await page.context().newCDPSession(page);
    const heap = async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      const { metrics } = await cdp.send('Performance.getMetrics');
      return metrics.find((metric) => metric.name === 'JSHeapUsedSize')?.value ?? 0;
    };
    await cdp.send('Performance.enable');
    const list = page.locator('.virtual-list');
    const loaded = () => page.locator('.virtual-row').first().getAttribute('aria-setsize').then(Number);
    // The default filter shows the alarms not yet reviewed: all but one.
    const shown = (await api<ReviewItemPage>('GET', '/api/review/items?reviewed=false&limit=1')).total;
    expect(shown).toBe(ALARMS);
    const before = await heap();
    const deadline = Date.now() + 120_000;
    while ((await loaded()) < shown && Date.now() < deadline) {
      await list.evaluate((element) => {
        element.scrollTop = element.scrollHeight;
      });
      await page.waitForTimeout(50);
    }
    expect(await loaded()).toBe(shown);
    const after = await heap();
    console.log(
      `alarm review heap: ${(before / 1e6).toFixed(1)} MB at the first page, ${(after / 1e6).toFixed(1)} MB with ${shown} alarms paged in`,
    );
    expect(await page.locator('.virtual-row').count()).toBeLessThan(40);
    expect(after).toBeLessThan(30e6);
  }, 180_000);
});
