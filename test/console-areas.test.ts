import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { VIDEO } from './helpers/fixtures';

/*
 * The editors of an app's zones, masks and ground calibration (the task editor's, the live view's),
 * and the rule editor's inertia, left and removed objects, in Chromium against an engine in its own
 * process serving the built console: what is drawn and typed is what the engine stores, in source
 * pixels.
 */

const POLL = { timeout: 30_000 };
/** Where the editors' screenshots go, to be looked at. */
const SHOTS = process.env.SHOTS_DIR ?? '/tmp/shots-ed';
/** vtest.avi's frame size: what polygons are in. */
const SOURCE = { width: 768, height: 576 };
/** Clicks land on whole display pixels; a source pixel is about 1.2 of them here. */
const TOLERANCE = 3;

type Pt = [number, number];
const ENTRANCE: Pt[] = [
  [60, 80],
  [330, 80],
  [330, 420],
  [60, 420],
];
const EXIT: Pt[] = [
  [420, 90],
  [700, 90],
  [700, 400],
  [420, 400],
];
const MASK: Pt[] = [
  [500, 450],
  [700, 450],
  [600, 540],
];
const MARKS: Pt[] = [
  [150, 480],
  [620, 480],
  [520, 200],
  [250, 200],
];
const GROUND: Pt[] = [
  [0, 0],
  [7, 0],
  [7, 20],
  [0, 20],
];

let c: ConsoleEngine;
let page: Page;
let taskId: string;

async function frameBox() {
  const box = await page.locator('.stage-frame').boundingBox();
  if (!box) throw new Error('the frame is not on the page');
  return box;
}

/** Clicks source pixels on the frame; `close` clicks the first point again (closes a region). */
async function clickPoints(points: Pt[], close: boolean): Promise<void> {
  await page.locator('.stage').scrollIntoViewIfNeeded();
  const box = await frameBox();
  const at = ([x, y]: Pt) => ({
    x: box.x + (x * box.width) / SOURCE.width,
    y: box.y + (y * box.height) / SOURCE.height,
  });
  for (const point of close ? [...points, points[0] as Pt] : points) {
    const { x, y } = at(point);
    await page.mouse.click(x, y);
  }
}

/** Whether a stored value is the expected one, numbers within TOLERANCE (source pixels). */
function near(actual: unknown, expected: unknown): boolean {
  if (typeof expected === 'number')
    return typeof actual === 'number' && Math.abs(actual - expected) <= TOLERANCE;
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, i) => near(actual[i], item))
    );
  }
  if (expected && typeof expected === 'object') {
    const keys = Object.keys(expected);
    return (
      !!actual &&
      typeof actual === 'object' &&
      JSON.stringify(Object.keys(actual).sort()) === JSON.stringify([...keys].sort()) &&
      keys.every((key) =>
        near((actual as Record<string, unknown>)[key], (expected as Record<string, unknown>)[key]),
      )
    );
  }
  return actual === expected;
}

async function storedConfig() {
  const task = await c.api<TaskView>('GET', `/api/task/${taskId}`);
  return task.app_configs.find((config) => config.app_id === 'motion');
}

/** Waits until the engine stores `expected` (within TOLERANCE); fails showing what it stores. */
async function untilStored(expected: unknown): Promise<void> {
  try {
    await expect.poll(async () => near(await storedConfig(), expected), POLL).toBe(true);
  } catch {
    await page.screenshot({ path: join(SHOTS, 'failed.png') });
    expect(await storedConfig()).toEqual(expected);
  }
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  c = await startConsoleEngine('console-areas', { engineArgs: ['--analysis-fps', '2'] });
  const body = { name: 'Yard', zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO };
  taskId = (await c.api<{ task_id: string }>('POST', '/api/task', body)).task_id;
  page = await c.open('/tasks', { width: 1400, height: 1000 });
}, 120_000);

afterAll(async () => c?.stop());

/** The task editor of the task, opened from its link. */
async function openTaskEditor() {
  await page.goto(`${c.engine.url}/#/tasks/${taskId}`);
  const dialog = page.getByRole('dialog', { name: 'Edit task Yard' });
  await dialog.getByLabel('AI video of task Yard').waitFor(POLL);
  return dialog;
}

const ZONES = {
  app_id: 'motion',
  polygon: [],
  zones: [
    { name: 'entrance', polygon: ENTRANCE },
    { name: 'exit', polygon: EXIT },
  ],
  masks: [MASK],
};

describe('zones, masks and calibration drawn over the task’s video', () => {
  it('draws two named zones and a mask in the task editor; the engine stores exactly those polygons', async () => {
    const dialog = await openTaskEditor();
    await dialog.getByRole('button', { name: 'Add zone' }).click();
    await dialog.getByRole('textbox', { name: 'Name of zone 1' }).fill('entrance');
    await clickPoints(ENTRANCE, true);
    await dialog.getByRole('button', { name: 'Add zone' }).click();
    await dialog.getByRole('textbox', { name: 'Name of zone 2' }).fill('exit');
    await clickPoints(EXIT, true);
    await dialog.getByRole('button', { name: 'Add mask' }).click();
    await clickPoints(MASK, true);
    await dialog.locator('.stage').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'zones-masks.png') });

    // A refusal of the engine lands on the row of the zone it names.
    const refusal = {
      code: 40001,
      msg: 'body.app_configs[0].zones[1].polygon: the polygon crosses itself',
      field: 'app_configs[0].zones[1].polygon',
    };
    const route = `${c.engine.url}/api/task/${taskId}`;
    await page.route(route, (request) =>
      request.request().method() === 'PUT'
        ? request.fulfill({ status: 400, contentType: 'application/json', body: JSON.stringify(refusal) })
        : request.fallback(),
    );
    await dialog.getByRole('button', { name: 'Apply to the running task' }).click();
    const exitRow = dialog
      .locator('.area-row')
      .filter({ has: page.getByRole('textbox', { name: 'Name of zone 2' }) });
    await exitRow.getByRole('alert').filter({ hasText: refusal.msg }).waitFor(POLL);
    expect(await dialog.locator('.area-row').getByRole('alert').count()).toBe(1);
    await page.unroute(route);

    await dialog.getByRole('button', { name: 'Apply to the running task' }).click();
    await dialog.waitFor({ state: 'detached', ...POLL });
    await untilStored(ZONES);
  }, 90_000);

  it('places four calibration marks with their ground metres; a segment measures; the engine stores them', async () => {
    const dialog = await openTaskEditor();
    // What the engine has is read back.
    expect([
      await dialog.getByRole('textbox', { name: 'Name of zone 1' }).inputValue(),
      await dialog.getByRole('textbox', { name: 'Name of zone 2' }).inputValue(),
    ]).toEqual(['entrance', 'exit']);
    await dialog.getByRole('button', { name: 'Place the four marks' }).click();
    await clickPoints(MARKS, false);
    for (const [mark, [x, y]] of GROUND.entries()) {
      await dialog.getByRole('textbox', { name: `Mark ${mark + 1}: ground x (m)` }).fill(String(x));
      await dialog.getByRole('textbox', { name: `Mark ${mark + 1}: ground y (m)` }).fill(String(y));
    }
    // The segment from mark 1 to mark 2 (its ends snap onto the marks) is 7 m on the ground.
    await dialog.getByRole('button', { name: 'Measure a distance' }).click();
    await clickPoints([MARKS[0] as Pt, MARKS[1] as Pt], false);
    await dialog.getByRole('status').filter({ hasText: 'Measured: 7.00 m' }).waitFor(POLL);
    await dialog.locator('.stage').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'calibration.png') });

    await dialog.getByRole('button', { name: 'Apply to the running task' }).click();
    await dialog.waitFor({ state: 'detached', ...POLL });
    await untilStored({ ...ZONES, calibration: { image: MARKS, ground: GROUND } });
    expect((await storedConfig())?.calibration?.ground).toEqual(GROUND);
  }, 90_000);

  it('shows them in the live view, which flags a duplicate zone name on its row and sends nothing', async () => {
    await page.goto(`${c.engine.url}/#/live/${taskId}`);
    await page.getByLabel('AI video of task Yard').waitFor(POLL);
    const second = page.getByRole('textbox', { name: 'Name of zone 2' });
    expect(await second.inputValue()).toBe('exit');
    await second.fill('entrance');
    await page.getByText('Another zone of this application has this name.').waitFor(POLL);
    await page
      .getByText('Not applied: Zone entrance of Motion detection is not valid; the task keeps what it has.')
      .waitFor(POLL);
    await page.screenshot({ path: join(SHOTS, 'live-view.png') });
    expect((await storedConfig())?.zones?.map((zone) => zone.name)).toEqual(['entrance', 'exit']);
    await second.fill('exit');
  }, 60_000);

  it('removes the calibration of the running task from the live view', async () => {
    await untilStored({ ...ZONES, calibration: { image: MARKS, ground: GROUND } });
    await page.getByRole('button', { name: 'Remove calibration' }).click();
    await page.getByRole('button', { name: 'Place the four marks' }).waitFor(POLL);
    await untilStored(ZONES);
  }, 60_000);
});

describe('zones and masks in the start wizard', () => {
  it('draws a zone and a mask on the raw preview; the started task has them, the region stays whole-frame', async () => {
    await page.goto(`${c.engine.url}/#/tasks`);
    await page.getByRole('button', { name: 'New task…' }).click();
    const wizard = page.getByRole('dialog', { name: 'Start a task' });
    await wizard.getByRole('textbox', { name: 'Name', exact: true }).fill('Gate');
    await wizard.getByRole('textbox', { name: 'Source URL' }).fill(pathToFileURL(VIDEO).href);
    await wizard.getByRole('button', { name: 'Preview' }).click();
    await wizard.getByText(`Source frame ${SOURCE.width} × ${SOURCE.height}`).waitFor(POLL);
    await wizard.getByRole('button', { name: 'Next' }).click();
    await wizard.getByRole('combobox', { name: 'Package' }).selectOption('builtin');
    await wizard.getByRole('checkbox', { name: /Motion detection/ }).check();
    await wizard.getByRole('button', { name: 'Next' }).click();

    await wizard.locator('.stage-frame video').waitFor(POLL);
    await wizard.getByRole('button', { name: 'Add zone' }).click();
    await wizard.getByRole('textbox', { name: 'Name of zone 1' }).fill('gate');
    await clickPoints(EXIT, true);
    await wizard.getByRole('button', { name: 'Add mask' }).click();
    await clickPoints(MASK, true);
    await wizard.getByRole('button', { name: 'Next' }).click();
    await wizard.getByRole('button', { name: 'Start task' }).click();
    await wizard.waitFor({ state: 'detached', ...POLL });

    const tasks = await c.api<TaskView[]>('GET', '/api/tasks?with_areas=true');
    const started = tasks.find((task) => task.name === 'Gate');
    expect(
      near(started?.app_configs, [
        { app_id: 'motion', polygon: [], zones: [{ name: 'gate', polygon: EXIT }], masks: [MASK] },
      ]),
      JSON.stringify(started?.app_configs),
    ).toBe(true);
  }, 90_000);
});

describe('inertia in the rule editor', () => {
  it('shows the default, and stores the hits and frames typed', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Packages' }).click();
    await page.getByRole('button', { name: /Edit the rule of Motion/ }).click();
    const dialog = page.getByRole('dialog', { name: /Rule of Motion/ });
    const hits = dialog.getByRole('spinbutton', { name: 'Inertia: matched frames' });
    const frames = dialog.getByRole('spinbutton', { name: 'Inertia: latest analysed frames' });
    expect([
      await hits.inputValue(),
      await hits.getAttribute('placeholder'),
      await frames.inputValue(),
      await frames.getAttribute('placeholder'),
    ]).toEqual(['', '3', '', '5']);
    await dialog.getByText('Empty: the default, 3 of 5.').waitFor();
    await hits.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'inertia-default.png') });
    await hits.fill('4');
    await frames.fill('6');
    await hits.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'inertia.png') });
    await dialog.getByRole('button', { name: 'Save rule' }).click();
    await dialog.waitFor({ state: 'detached', ...POLL });
    const packages = await c.api<
      Array<{ zapk_id: string; apps: Record<string, { rule: { inertia?: unknown } }> }>
    >('GET', '/api/zapk');
    const rule = packages.find((pkg) => pkg.zapk_id === 'builtin')?.apps.motion?.rule;
    expect(rule?.inertia).toEqual({ hits: 4, frames: 6 });
  }, 60_000);
});

describe('left and removed objects in the rule editor', () => {
  it("shows the engine's defaults and refusals on their fields, and stores what is typed", async () => {
    await page.goto(`${c.engine.url}/#/packages`);
    await page.getByRole('button', { name: /Edit the rule of Region intrusion/ }).click();
    const dialog = page.getByRole('dialog', { name: /Rule of Region intrusion/ });
    await dialog.getByRole('button', { name: 'Watch for left objects' }).click();
    await dialog.getByRole('button', { name: 'Watch for removed objects' }).click();
    const left = dialog.getByRole('group', { name: 'Left objects' });
    const removed = dialog.getByRole('group', { name: 'Removed objects' });
    const meters = left.getByRole('spinbutton', { name: 'Nobody within (m)' });
    expect([
      await meters.inputValue(),
      await meters.getAttribute('placeholder'),
      await left.getByRole('combobox', { name: 'Person class' }).inputValue(),
      await left.getByRole('combobox', { name: 'Person class' }).locator('option:checked').textContent(),
    ]).toEqual(['', 'person heights', '', 'Default (0 · motion)']);

    // The engine's own schema refuses a left time under 3 s, on that field.
    const seconds = left.getByRole('spinbutton', { name: 'Left for (s)' });
    await seconds.fill('2');
    await left.getByRole('alert').filter({ hasText: 'Must be at least 3.' }).waitFor(POLL);
    expect(await seconds.getAttribute('aria-invalid')).toBe('true');
    await seconds.fill('45');
    await left.getByRole('spinbutton', { name: 'Nobody within (person heights)' }).fill('1.5');
    await meters.fill('2');
    await removed.getByRole('spinbutton', { name: 'Differs for (s)' }).fill('8');
    await removed.getByRole('spinbutton', { name: 'Share that differs' }).fill('0.4');
    await removed.getByRole('combobox', { name: 'Person class' }).selectOption('0');
    await left.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'left-removed.png') });

    // A refusal of the engine lands on the field it names.
    const refusal = {
      code: 40001,
      msg: 'body.rule.removed_object.fraction: must be <= 1',
      field: 'rule.removed_object.fraction',
    };
    const route = `${c.engine.url}/api/zapk/builtin/app/intrusion`;
    await page.route(route, (request) =>
      request.request().method() === 'PUT'
        ? request.fulfill({ status: 400, contentType: 'application/json', body: JSON.stringify(refusal) })
        : request.fallback(),
    );
    await dialog.getByRole('button', { name: 'Save rule' }).click();
    await removed.getByRole('alert').filter({ hasText: refusal.msg }).waitFor(POLL);
    expect(
      await removed.getByRole('spinbutton', { name: 'Share that differs' }).getAttribute('aria-invalid'),
    ).toBe('true');
    await page.unroute(route);

    await dialog.getByRole('button', { name: 'Save rule' }).click();
    await dialog.waitFor({ state: 'detached', ...POLL });
    const packages = await c.api<
      Array<{
        zapk_id: string;
        apps: Record<string, { rule: { left_object?: unknown; removed_object?: unknown } }>;
      }>
    >('GET', '/api/zapk');
    const rule = packages.find((pkg) => pkg.zapk_id === 'builtin')?.apps.intrusion?.rule;
    expect([rule?.left_object, rule?.removed_object]).toEqual([
      { seconds: 45, radius: 1.5, meters: 2 },
      { seconds: 8, fraction: 0.4, person_class_id: '0' },
    ]);
  }, 60_000);
});
