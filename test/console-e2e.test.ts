// Over 400 lines on purpose: one operator's session through the console in a real browser, step by step.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildZapk } from '../engine/packages/zapk';
import type { TaskView } from '../engine/tasks/schema';
import { launchChromium, openAccountMenu, openConsolePage } from './helpers/browser';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { EXAMPLE_MANIFEST } from './helpers/example-package';
import { FIXTURES, VIDEO } from './helpers/fixtures';
import { Receiver } from './helpers/receiver';

/*
 * The web console in headless Debian Chromium against the engine as operators run it (npm run engine,
 * serving the built console of `npm run build`): every step an operator takes, checked on the screen
 * and against the engine's API. Screenshots of each screen go to test-output/console/.
 */

const ROOT = resolve(import.meta.dirname, '..');
const CONSOLE = join(ROOT, 'out', 'renderer', 'index.html');
const SHOTS = join(ROOT, 'test-output', 'console');
const PASSWORD = 'console-e2e-password';
/** How long the page may take to show something (a loaded machine is slow, never wrong). */
const POLL = { timeout: 10_000 };
/** vtest.avi's frame size: what the engine decodes and polygons are in. */
const SOURCE = { width: 768, height: 576 };
/** The region drawn in the wizard, as fractions of the frame. */
const REGION: Array<[number, number]> = [
  [0.2, 0.25],
  [0.75, 0.25],
  [0.75, 0.9],
  [0.2, 0.9],
];

let engine: EngineProcess;
let token: string;
let browser: Browser;
let page: Page;
let receiver: Receiver;
let dataDir: string;
let zapk: string;
/** A pair for change detection: a fixture photo, and the same with a red block on it. */
const BEFORE = join(FIXTURES, 'media', 'leuvenB.jpg');
let after: string;
let taskId: string;
/** The polygon the clicks should have produced, in source pixels. */
let drawn: Array<[number, number]> = [];
const pageErrors: string[] = [];

const api = <T>(method: string, path: string, body?: unknown) =>
  callApi<T>(engine.url, token, method, path, body);

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

/** Waits until `check` holds (polling the engine), or fails naming what did not happen. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The frame's place on the page: the letterboxed, zoomed and panned picture under the canvas. */
async function frameBox(scope: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  const box = await scope.locator('.stage-frame').boundingBox();
  if (!box) throw new Error('the frame is not on the page');
  return box;
}

/** A source pixel's place on the page, for a frame box. */
function onPage(box: { x: number; y: number; width: number; height: number }, source: [number, number]) {
  return {
    x: box.x + (source[0] * box.width) / SOURCE.width,
    y: box.y + (source[1] * box.height) / SOURCE.height,
  };
}

/** The source pixel under a page point, as the engine must receive it. */
function toSourcePixel(box: { x: number; y: number; width: number; height: number }, x: number, y: number) {
  return [
    Math.round(((x - box.x) * SOURCE.width) / box.width),
    Math.round(((y - box.y) * SOURCE.height) / box.height),
  ] as [number, number];
}

function expectPolygonNear(
  actual: number[][] | undefined,
  expected: Array<[number, number]>,
  tolerance: number,
) {
  expect(actual).toHaveLength(expected.length);
  expected.forEach(([x, y], i) => {
    const [ax, ay] = actual?.[i] ?? [Number.NaN, Number.NaN];
    expect(Math.abs((ax ?? Number.NaN) - x), `x of point ${i}: ${ax} vs ${x}`).toBeLessThanOrEqual(tolerance);
    expect(Math.abs((ay ?? Number.NaN) - y), `y of point ${i}: ${ay} vs ${y}`).toBeLessThanOrEqual(tolerance);
  });
}

async function videoTime(video: Locator): Promise<number> {
  return video.evaluate((element) => (element as HTMLVideoElement).currentTime);
}

beforeAll(async () => {
  expect(existsSync(CONSOLE), 'the console is built (npm run build) before this test').toBe(true);
  mkdirSync(SHOTS, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'vc-console-e2e-'));
  zapk = join(dataDir, 'coco-yolox-nano.zapk');
  await buildZapk(EXAMPLE_MANIFEST, zapk);
  after = join(dataDir, 'leuvenB-after.jpg');
  const block = await sharp({ create: { width: 120, height: 90, channels: 3, background: '#d03020' } })
    .png()
    .toBuffer();
  await sharp(BEFORE)
    .composite([{ input: block, left: 400, top: 280 }])
    .jpeg()
    .toFile(after);
  receiver = await Receiver.start({ keepBodies: false });
  engine = await spawnEngine(join(dataDir, 'data'), PASSWORD);
  token = await signIn(engine.url, PASSWORD);
  browser = await launchChromium();
  page = await openConsolePage(browser, pageErrors);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopEngine(engine);
  await receiver?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('web console in Chromium', () => {
  it('signs in', async () => {
    await page.goto(engine.url);
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).isVisible(), POLL).toBe(true);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
    await shot('01-sign-in');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Application packages' }).waitFor();
    await openAccountMenu(page);
    await expect.poll(() => page.getByText('Signed in as admin').isVisible(), POLL).toBe(true);
    // The menu folds away again, as an operator closes it.
    await page.keyboard.press('Escape');
  });

  it('installs the example package picked in the file dialog', async () => {
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Install package…' }).click();
    await (await chooser).setFiles(zapk);
    await page.getByRole('status').filter({ hasText: 'Package coco-yolox-nano 1.0.0 installed.' }).waitFor();
    const card = page.getByRole('region', { name: /COCO detection \(YOLOX-Nano\)/ });
    await card.waitFor();
    await expect.poll(() => card.getByRole('row').count(), POLL).toBe(5);
    await expect.poll(() => card.getByText('Perpetual').count(), POLL).toBe(4);
    await shot('02-packages');
    const listed = await api<Array<{ zapk_id: string }>>('GET', '/api/zapk');
    expect(listed.map((pkg) => pkg.zapk_id)).toContain('coco-yolox-nano');
  });

  it('edits a rule: refuses a bad threshold on its field, saves a good one, which persists', async () => {
    await page.getByRole('button', { name: 'Edit the rule of Person detection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rule of Person detection' });
    const threshold = dialog.getByRole('spinbutton', { name: 'Score threshold' });
    await threshold.fill('1.5');
    await dialog.getByRole('button', { name: 'Save rule' }).click();
    await dialog.getByText('Must be at most 1.').waitFor();
    expect(await threshold.getAttribute('aria-invalid')).toBe('true');
    await dialog.getByText('Fix the problems marked below before saving (1).').waitFor();
    await shot('03-rule-editor-error');
    // Nothing reached the engine.
    const before = await api<
      Array<{
        zapk_id: string;
        apps: Record<string, { rule: { classes: Record<string, { threshold: number }> } }>;
      }>
    >('GET', '/api/zapk');
    expect(
      before.find((pkg) => pkg.zapk_id === 'coco-yolox-nano')?.apps.person?.rule.classes['0']?.threshold,
    ).toBe(0.55);

    await threshold.fill('0.6');
    await dialog.getByRole('spinbutton', { name: 'Interval between callbacks (s)' }).fill('2');
    await dialog.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('status').filter({ hasText: 'The rule of Person detection was saved.' }).waitFor();
    const after = await api<typeof before>('GET', '/api/zapk');
    const rule = after.find((pkg) => pkg.zapk_id === 'coco-yolox-nano')?.apps.person?.rule as unknown as {
      interval: number;
      classes: Record<string, { threshold: number }>;
    };
    expect(rule.interval).toBe(2);
    expect(rule.classes['0']?.threshold).toBe(0.6);

    // A reload reads it back from the engine.
    await page.reload();
    await page.getByRole('button', { name: 'Edit the rule of Person detection' }).click();
    const reopened = page.getByRole('dialog', { name: 'Rule of Person detection' });
    expect(await reopened.getByRole('spinbutton', { name: 'Score threshold' }).inputValue()).toBe('0.6');
    expect(
      await reopened.getByRole('spinbutton', { name: 'Interval between callbacks (s)' }).inputValue(),
    ).toBe('2');
    await reopened.getByRole('button', { name: 'Cancel' }).click();
  });

  it('starts a video task with the wizard: raw preview, apps, a region drawn with clicks on the preview', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('button', { name: 'New task…' }).click();
    const wizard = page.getByRole('dialog', { name: 'Start a task' });
    await wizard.getByRole('textbox', { name: 'Source URL' }).fill(pathToFileURL(VIDEO).href);
    await wizard.getByRole('button', { name: 'Preview' }).click();
    await wizard.getByText(`Source frame ${SOURCE.width} × ${SOURCE.height}`).waitFor({ timeout: 20_000 });
    const preview = wizard.locator('.preview video');
    await expect.poll(() => videoTime(preview), { timeout: 20_000 }).toBeGreaterThan(0.5);
    await shot('04-wizard-preview');
    await wizard.getByRole('button', { name: 'Next' }).click();

    await wizard.getByRole('combobox', { name: 'Package' }).selectOption('coco-yolox-nano');
    await expect
      .poll(() => wizard.getByRole('checkbox', { name: /Crowd gathering/ }).isEnabled(), POLL)
      .toBe(true);
    await wizard.getByRole('button', { name: 'Next' }).click();
    await wizard.getByText('Choose at least one application.').waitFor();
    await wizard.getByRole('checkbox', { name: /Person detection/ }).check();
    await wizard.getByRole('button', { name: 'Next' }).click();

    // Regions: four clicks on the preview, then a click on the first point closes the region.
    const surface = wizard.getByRole('application');
    await surface.locator('canvas').first().waitFor();
    await expect.poll(() => videoTime(surface.locator('video')), { timeout: 20_000 }).toBeGreaterThan(0.5);
    const box = await frameBox(surface);
    // Letterboxed: the frame keeps the source's aspect ratio and is centred in the drawing surface.
    const stage = (await surface.boundingBox()) as { x: number; y: number; width: number; height: number };
    expect(box.width / box.height).toBeCloseTo(SOURCE.width / SOURCE.height, 2);
    expect(box.x - stage.x).toBeCloseTo(stage.x + stage.width - (box.x + box.width), 0);
    expect(box.y - stage.y).toBeCloseTo(stage.y + stage.height - (box.y + box.height), 0);
    drawn = [];
    for (const [fx, fy] of REGION) {
      const x = Math.round(box.x + fx * box.width);
      const y = Math.round(box.y + fy * box.height);
      await page.mouse.click(x, y);
      drawn.push(toSourcePixel(box, x, y));
    }
    const first = onPage(box, drawn[0] as [number, number]);
    await page.mouse.click(first.x, first.y);
    await wizard.getByText('4 points').waitFor();
    await shot('05-wizard-region');
    await wizard.getByRole('button', { name: 'Next' }).click();

    await wizard.getByRole('textbox', { name: 'Callback URL' }).fill(receiver.url);
    await wizard.getByRole('textbox', { name: 'Business ID' }).fill('gate-a');
    await wizard.getByRole('textbox', { name: 'Device ID' }).fill('cam-e2e');
    await wizard.getByRole('textbox', { name: 'Analysis rate (frames/s)' }).fill('8');
    await wizard.getByRole('button', { name: 'Start task' }).click();
    await page.getByRole('heading', { name: 'Live view' }).waitFor({ timeout: 30_000 });

    const tasks = await api<TaskView[]>('GET', '/api/tasks');
    expect(tasks).toHaveLength(1);
    taskId = (tasks[0] as TaskView).task_id;
    const task = await api<TaskView & { business_id: string; device_id: string; report_url: string }>(
      'GET',
      `/api/task/${taskId}`,
    );
    expect(task).toMatchObject({
      business_id: 'gate-a',
      device_id: 'cam-e2e',
      report_url: receiver.url,
      analysis_fps: 8,
    });
    expect(task.health.stream).toMatchObject({ width: SOURCE.width, height: SOURCE.height });
    expectPolygonNear(task.app_configs.find((config) => config.app_id === 'person')?.polygon, drawn, 1);
  }, 90_000);

  it('plays the AI video in the live view', async () => {
    const video = page.locator('.region-canvas video');
    await video.waitFor({ timeout: 20_000 });
    await expect.poll(() => videoTime(video), { timeout: 30_000 }).toBeGreaterThan(0);
    const start = await videoTime(video);
    await expect.poll(() => videoTime(video), { timeout: 20_000 }).toBeGreaterThan(start + 1.5);
    await page.getByText('AI video playing.').waitFor();
  }, 60_000);

  it('moves a vertex by dragging it on the zoomed video; the engine gets it in source pixels', async () => {
    const surface = page.getByRole('application');
    const fitted = await frameBox(surface);
    // Zoom in around the frame's centre with the wheel (three steps of 1.2).
    await page.mouse.move(fitted.x + fitted.width / 2, fitted.y + fitted.height / 2);
    for (let step = 0; step < 3; step++) {
      await page.mouse.wheel(0, -120);
      await page.waitForTimeout(50);
    }
    await expect.poll(async () => (await frameBox(surface)).width, POLL).toBeGreaterThan(fitted.width * 1.7);
    const zoomed = await frameBox(surface);
    expect(zoomed.width / fitted.width).toBeCloseTo(1.728, 2);

    const from = onPage(zoomed, drawn[1] as [number, number]);
    const to = {
      x: Math.round(zoomed.x + 0.6 * zoomed.width),
      y: Math.round(zoomed.y + 0.4 * zoomed.height),
    };
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(to.x, to.y, { steps: 8 });
    await page.mouse.up();
    const moved: Array<[number, number]> = drawn.map((point, i) =>
      i === 1 ? toSourcePixel(zoomed, to.x, to.y) : point,
    );
    await until('the moved vertex in the engine', async () => {
      const task = await api<TaskView>('GET', `/api/task/${taskId}`);
      const polygon = task.app_configs.find((config) => config.app_id === 'person')?.polygon;
      return Math.abs((polygon?.[1]?.[0] ?? 0) - (moved[1] as [number, number])[0]) <= 2;
    });
    const task = await api<TaskView>('GET', `/api/task/${taskId}`);
    expectPolygonNear(task.app_configs.find((config) => config.app_id === 'person')?.polygon, moved, 2);
    await page.getByText('Regions saved: the task uses them now.').waitFor();

    // Keyboard: Ctrl+Z takes the move back, Ctrl+Shift+Z redoes it; each is applied to the task.
    const personPolygon = async () =>
      (await api<TaskView>('GET', `/api/task/${taskId}`)).app_configs.find(
        (config) => config.app_id === 'person',
      )?.polygon;
    await surface.focus();
    await page.keyboard.press('Control+z');
    await until(
      'the undone move in the engine',
      async () => JSON.stringify(await personPolygon()) === JSON.stringify(drawn),
    );
    await page.keyboard.press('Control+Shift+z');
    await until(
      'the redone move in the engine',
      async () =>
        JSON.stringify(await personPolygon()) ===
        JSON.stringify(task.app_configs.find((config) => config.app_id === 'person')?.polygon ?? []),
    );
    drawn = moved;

    // Defect 2 of issue 16: a self-crossing shape is never sent, and the status says so (not "saved").
    const points = page.getByRole('textbox', { name: 'Points (x,y …)' });
    const bowtie = '100,100 500,400 500,100 100,400';
    await points.fill(bowtie);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Not applied: the region of Person detection is not valid').waitFor();
    expect(await page.getByText('Regions saved: the task uses them now.').count()).toBe(0);
    await page.waitForTimeout(1000);
    expectPolygonNear(await personPolygon(), moved, 2);
    await surface.focus();
    await page.keyboard.press('Control+z');
    await page.getByText('Not applied:').waitFor({ state: 'detached' });
    expectPolygonNear(await personPolygon(), moved, 2);

    // Back to the fit (key 0); a window of another size keeps the frame letterboxed and the mapping exact.
    await surface.focus();
    await page.keyboard.press('0');
    await page.setViewportSize({ width: 1100, height: 800 });
    await expect.poll(async () => (await frameBox(surface)).width, POLL).toBeLessThan(fitted.width);
    const resized = await frameBox(surface);
    expect(resized.width / resized.height).toBeCloseTo(SOURCE.width / SOURCE.height, 2);
    const corner = onPage(resized, drawn[0] as [number, number]);
    await page.mouse.move(corner.x, corner.y);
    const readout = (await surface.locator('.stage-readout').textContent()) ?? '';
    const [rx, ry] =
      readout
        .split('·')[0]
        ?.split(',')
        .map((part) => Number(part.trim())) ?? [];
    expect(Math.abs((rx ?? Number.NaN) - (drawn[0] as [number, number])[0])).toBeLessThanOrEqual(1);
    expect(Math.abs((ry ?? Number.NaN) - (drawn[0] as [number, number])[1])).toBeLessThanOrEqual(1);
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.getByText('occupied').first().waitFor({ timeout: 30_000 });
    await shot('06-live-view');
  }, 90_000);

  it('shows events arriving in the feed with thumbnails, delivery state and a full-size snapshot', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Events' }).click();
    await page.getByRole('status').filter({ hasText: 'Live feed connected' }).first().waitFor();
    const thumb = page.getByRole('button', { name: 'Open the snapshot of Person detection: person' }).first();
    await thumb.waitFor({ timeout: 30_000 });
    await page.getByText('Delivered', { exact: true }).first().waitFor({ timeout: 30_000 });
    const size = () =>
      thumb
        .locator('img')
        .evaluate((image) => [
          (image as HTMLImageElement).naturalWidth,
          (image as HTMLImageElement).naturalHeight,
        ]);
    // The engine's 320 px thumbnail (loaded lazily), not the whole snapshot.
    await expect.poll(size, POLL).toEqual([320, (320 * SOURCE.height) / SOURCE.width]);
    await page.getByRole('combobox', { name: 'Application' }).selectOption('person');
    await shot('07-events');
    await thumb.click();
    const dialog = page.getByRole('dialog', { name: /^Person detection: person at / });
    await dialog.getByRole('img', { name: 'Annotated frame of Person detection: person' }).waitFor();
    expect(await dialog.getByRole('row').count()).toBeGreaterThan(1);
    await shot('08-snapshot');
    // The snapshot has an address: a reload (an empty feed) opens the same event, read from the engine.
    const opened = new URL(page.url()).hash;
    expect(opened).toMatch(new RegExp(`^#/events/${taskId}/\\d+/person%3A0$`));
    const rows = await dialog.getByRole('row').allTextContents();
    await page.reload();
    await dialog.getByRole('img', { name: 'Annotated frame of Person detection: person' }).waitFor();
    expect(await dialog.getByRole('row').allTextContents()).toEqual(rows);
    expect(new URL(page.url()).hash).toBe(opened);
    await dialog.getByRole('button', { name: 'Close dialog' }).click();
    await expect.poll(() => new URL(page.url()).hash, POLL).toBe('#/events');
    expect(receiver.accepted.length).toBeGreaterThan(0);
  }, 60_000);

  it('uploads an image to an image task started with the wizard, and a pair to a diff task', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('button', { name: 'New task…' }).click();
    const wizard = page.getByRole('dialog', { name: 'Start a task' });
    await wizard.getByRole('radio', { name: 'Image' }).check();
    await wizard.getByRole('button', { name: 'Next' }).click();
    await wizard.getByRole('combobox', { name: 'Package' }).selectOption('coco-yolox-nano');
    // Time-series apps run in video tasks only: offered, but not for an image task.
    expect(await wizard.getByRole('checkbox', { name: /Loitering/ }).isDisabled()).toBe(true);
    await wizard.getByRole('checkbox', { name: /Person detection/ }).check();
    await wizard.getByRole('button', { name: 'Next' }).click();
    await wizard.getByText('Without a preview, type the coordinates').waitFor();
    await wizard.getByRole('button', { name: 'Next' }).click();
    await wizard.getByRole('button', { name: 'Start task' }).click();
    await page.getByRole('heading', { name: 'Images' }).waitFor();

    await page.getByLabel('Image files').setInputFiles(join(FIXTURES, 'media', 'basketball1.png'));
    await page.getByRole('button', { name: 'Upload and analyse' }).click();
    const annotated = page.getByRole('img', { name: 'Annotated frame of Person detection: person' });
    await annotated.waitFor({ timeout: 30_000 });
    await page.getByText('image 1, 640 × 480').waitFor();
    expect(await annotated.evaluate((image) => (image as HTMLImageElement).naturalWidth)).toBe(640);
    expect(await page.getByText(/^person 0\.\d\d · /).count()).toBeGreaterThanOrEqual(2);
    await shot('09-image-task');

    const diff = await api<{ task_id: string }>('POST', '/api/task', {
      mode: 'diff',
      zapk_id: 'builtin',
      app_ids: ['change'],
    });
    const select = page.getByRole('combobox', { name: 'Task' });
    // Listed by its title: a diff task without a name or device is called by its mode.
    await select.locator(`option[value="${diff.task_id}"]`).waitFor({ state: 'attached', timeout: 10_000 });
    expect(await select.locator(`option[value="${diff.task_id}"]`).textContent()).toMatch(/^diff/);
    await select.selectOption(diff.task_id);
    await page.getByLabel('Before (image A)').setInputFiles(BEFORE);
    await page.getByLabel('After (image B)').setInputFiles(after);
    await page.getByRole('button', { name: 'Upload and analyse' }).click();
    await page
      .getByRole('img', { name: 'Annotated frame of Scene change: change' })
      .waitFor({ timeout: 30_000 });
    await page.getByText('Scene change: change').first().waitFor();
    await page
      .getByText(/px changed$/)
      .first()
      .waitFor();
    await shot('10-diff-task');
  }, 90_000);

  it('switches the language to Simplified Chinese and the theme to dark', async () => {
    await openAccountMenu(page);
    await page.getByRole('combobox', { name: 'Language' }).selectOption('zh-CN');
    await page.getByRole('navigation').getByRole('link', { name: '任务' }).click();
    await page.getByRole('heading', { name: '分析任务' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('zh-CN');
    await page.getByRole('cell', { name: '运行中' }).or(page.getByText('运行中')).first().waitFor();
    await shot('11-tasks-zh-CN');
    await openAccountMenu(page);
    await page.getByRole('combobox', { name: '主题' }).selectOption('dark');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(background).toBe('rgb(21, 23, 28)');
    await page.getByRole('navigation').getByRole('link', { name: '实时画面' }).click();
    await page.locator('.region-canvas video').waitFor();
    await shot('12-live-view-dark-zh-CN');
    await openAccountMenu(page);
    await page.getByRole('combobox', { name: '语言' }).selectOption('en');
    await openAccountMenu(page);
    await page.getByRole('combobox', { name: 'Theme' }).selectOption('light');
    await page.getByRole('navigation').getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'MQTT broker' }).waitFor();
    await shot('13-settings');
  });

  it('closes the task from the table', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    // Started in the wizard without a name: the task is known by its device id.
    const { name } = await api<TaskView>('GET', `/api/task/${taskId}`);
    expect(name).toBe('cam-e2e');
    await page.getByRole('button', { name: `Close task ${name}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Close task' });
    await confirm.getByRole('button', { name: 'Close', exact: true }).click();
    await page.getByText('Closed by the caller', { exact: true }).waitFor({ timeout: 20_000 });
    const task = await api<TaskView>('GET', `/api/task/${taskId}`);
    expect(task.close_code).toBe(1);
    await shot('14-tasks-closed');
    expect(pageErrors).toEqual([]);
  });
});
