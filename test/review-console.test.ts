import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { systemClock } from '../engine/clock';
import { EventBus } from '../engine/events/bus';
import { openDb } from '../engine/store/db';
import { launchChromium, presetSession } from './helpers/browser';
import { readZip } from './helpers/coco';
import { type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { message } from './helpers/receiver';

/*
 * Alarm review's pictures and export in Chromium: three alarms stored through the outbox's own write
 * path with 1280x720 snapshots, the oldest of which lost its snapshot to the outbox's size bound. The
 * list shows the engine's small thumbnails (decoded by the browser: 320 px wide), says "No picture"
 * where the snapshot went (no broken image), and exports the selected alarm with e and with its link.
 */

const PASSWORD = 'review-console-password';
const POLL = { timeout: 30_000 };
const CAMERA = randomUUID();

let engine: EngineProcess;
let browser: Browser;
let page: Page;
let dataDir: string;
const stored: string[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vc-review-console-'));
  const snapshot = (
    await sharp({ create: { width: 1280, height: 720, channels: 3, background: '#406080' } })
      .jpeg()
      .toBuffer()
  ).toString('base64');
  const db = openDb(join(dataDir, 'data'));
  // Room for two snapshots: the third alarm's drops the first's.
  const outbox = new Outbox(
    new OutboxRepository(db),
    { listedTaskIds: () => [CAMERA] },
    systemClock,
    new EventBus(),
    { imageLimitBytes: 2 * snapshot.length + 100 },
  );
  for (let i = 1; i <= 3; i++) {
    const event = message(CAMERA, i);
    if (event.event === 'message') (event.data.rules[0] as { image: string }).image = snapshot;
    stored.push(outbox.enqueue({ task_id: CAMERA, report_url: '' }, event).event_id);
  }
  db.close();
  engine = await spawnEngine(join(dataDir, 'data'), PASSWORD);
  const token = await signIn(engine.url, PASSWORD);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 720 }, acceptDownloads: true });
  await presetSession(page, token);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stopEngine(engine);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const rows = () => page.locator('.alarm-row');

async function download(start: () => Promise<void>): Promise<Map<string, Buffer>> {
  const [file] = await Promise.all([page.waitForEvent('download', POLL), start()]);
  return readZip(readFileSync(await file.path()));
}

describe('alarm review in Chromium', () => {
  it('shows 320 px thumbnails from the engine, and "No picture" where the snapshot was dropped', async () => {
    await page.goto(`${engine.url}/#/alarms`);
    await page.getByRole('status').filter({ hasText: '3 review items' }).waitFor(POLL);
    const thumbs = rows().locator('img.alarm-thumb');
    await expect
      .poll(
        () => thumbs.evaluateAll((images) => images.map((image) => (image as HTMLImageElement).naturalWidth)),
        POLL,
      )
      .toEqual([320, 320]);
    expect(
      await rows()
        .nth(2)
        .locator('.alarm-thumb')
        .evaluate((element) => element.tagName),
    ).toBe('SPAN');
    expect(await rows().nth(2).locator('.alarm-thumb').textContent()).toBe('No picture');
  }, 60_000);

  it('exports the selected alarm with e and with its link', async () => {
    const byKey = await download(() => page.keyboard.press('e'));
    expect([...byKey.keys()].sort()).toEqual(['alarm.json', 'snapshot-0.jpg']);
    const json = JSON.parse(String(byKey.get('alarm.json'))) as { alarm: { event_id: string; seq: number } };
    expect([json.alarm.event_id, json.alarm.seq]).toEqual([stored[2], 3]);
    expect((await sharp(byKey.get('snapshot-0.jpg') as Buffer).metadata()).width).toBe(1280);

    await page.keyboard.press('j');
    await page.keyboard.press('j');
    const byLink = await download(() =>
      page.getByRole('link', { name: 'Export (JSON and picture)' }).click(),
    );
    expect([...byLink.keys()]).toEqual(['alarm.json']);
    expect(JSON.parse(String(byLink.get('alarm.json'))).alarm.event_id).toBe(stored[0]);
    await page
      .getByText('The engine no longer keeps this alarm’s picture (its image store was full).')
      .waitFor();
  }, 60_000);
});
