import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { systemClock } from '../engine/clock';
import { EventBus } from '../engine/events/bus';
import { openDb } from '../engine/store/db';
import { launchChromium, presetSession } from './helpers/browser';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { VIDEO } from './helpers/fixtures';
import { message } from './helpers/receiver';

/*
 * The web console in Chromium against the built engine: its pictures and downloads (alarm
 * thumbnails and export, a task's heatmap) carry short-lived link tokens, and no address the
 * page asks for, nor any src or href in it, holds the 24 h API token. The only connections that
 * still carry it are the event feed (EventSource) and video sockets, which no history keeps.
 */

const PASSWORD = 'console-link-tokens-password';
const POLL = { timeout: 30_000 };
const CAMERA = randomUUID();
const CONSOLE = resolve(import.meta.dirname, '..', 'out', 'renderer', 'index.html');

let engine: EngineProcess;
let browser: Browser;
let page: Page;
let dataDir: string;
let token: string;
let taskId: string;
const requested: string[] = [];

beforeAll(async () => {
  expect(existsSync(CONSOLE), 'the console is built (npm run build) before this test').toBe(true);
  dataDir = mkdtempSync(join(tmpdir(), 'vc-console-link-tokens-'));
  const snapshot = (
    await sharp({ create: { width: 1280, height: 720, channels: 3, background: '#406080' } })
      .jpeg()
      .toBuffer()
  ).toString('base64');
  const db = openDb(join(dataDir, 'data'));
  const outbox = new Outbox(
    new OutboxRepository(db),
    { listedTaskIds: () => [CAMERA] },
    systemClock,
    new EventBus(),
  );
  for (let i = 1; i <= 2; i++) {
    const event = message(CAMERA, i);
    if (event.event === 'message') (event.data.rules[0] as { image: string }).image = snapshot;
    outbox.enqueue({ task_id: CAMERA, report_url: '' }, event);
  }
  db.close();
  engine = await spawnEngine(join(dataDir, 'data'), PASSWORD, ['--analysis-fps', '2']);
  token = await signIn(engine.url, PASSWORD);
  ({ task_id: taskId } = await callApi<{ task_id: string }>(engine.url, token, 'POST', '/api/task', {
    name: 'Dock 1',
    zapk_id: 'builtin',
    app_ids: ['motion'],
    video_url: VIDEO,
  }));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  page.on('request', (request) => requested.push(request.url()));
  await presetSession(page, token);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stopEngine(engine);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Every src and href of the page. */
const addresses = () =>
  page.evaluate(() =>
    [...document.querySelectorAll('[src], [href]')].map(
      (element) => element.getAttribute('src') ?? element.getAttribute('href') ?? '',
    ),
  );

describe('the web console’s links', () => {
  it('shows alarm thumbnails and exports through link tokens, not the API token', async () => {
    await page.goto(`${engine.url}/#/alarms`);
    const thumbs = page.locator('.alarm-row img.alarm-thumb');
    await expect
      .poll(
        () => thumbs.evaluateAll((images) => images.map((image) => (image as HTMLImageElement).naturalWidth)),
        POLL,
      )
      .toEqual([320, 320]);
    const sources = await thumbs.evaluateAll((images) => images.map((image) => image.getAttribute('src')));
    for (const src of sources) expect(new URL(src ?? '').searchParams.get('token')).toMatch(/^[0-9a-z]+\./);

    const exportLink = page.getByRole('link', { name: 'Export (JSON and picture)' });
    await expect.poll(() => exportLink.getAttribute('href'), POLL).toContain('token=');
    const href = (await exportLink.getAttribute('href')) ?? '';
    expect(href).not.toContain(token);
    const zip = await fetch(href);
    expect([zip.status, zip.headers.get('content-type')]).toEqual([200, 'application/zip']);
    for (const address of await addresses()) expect(address).not.toContain(token);
  }, 60_000);

  it("shows a running task's heatmap through link tokens", async () => {
    await page.goto(`${engine.url}/#/live/${taskId}`);
    await page.getByRole('checkbox', { name: 'Heatmap' }).check(POLL);
    const picture = page.getByRole('img', { name: 'Heatmap of task Dock 1' });
    await expect
      .poll(() => picture.evaluate((img) => (img as HTMLImageElement).naturalWidth), POLL)
      .toBeGreaterThan(0);
    expect(await picture.getAttribute('src')).toMatch(/[?&]token=[0-9a-z]+\./);
    for (const address of await addresses()) expect(address).not.toContain(token);
  }, 60_000);

  it('asked for no address with the API token in it but the event feed', () => {
    const minted = requested.filter((url) => url.includes('token='));
    expect(minted.length).toBeGreaterThan(3);
    const withApiToken = requested.filter((url) => url.includes(token));
    expect(withApiToken.map((url) => new URL(url).pathname)).toEqual(
      withApiToken.map(() => '/api/events/stream'),
    );
  });
});
