import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openConsolePage, startFromSource } from './helpers/browser';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { VIDEO } from './helpers/fixtures';

/*
 * The web console's addresses (hash routes) in headless Chromium against the built engine: a link to
 * a task's live view opens that view in a fresh page, after a reload and in a new tab; and a refusal
 * is marked on the field its envelope names.
 */

const ROOT = resolve(import.meta.dirname, '..');
const CONSOLE = join(ROOT, 'out', 'renderer', 'index.html');
const PASSWORD = 'console-links-password';

let engine: EngineProcess;
let browser: Browser;
let dataDir: string;
let taskId: string;
const pageErrors: string[] = [];

/** Signs in when the page asks for it (a new tab has no session of its own), then waits for `ready`. */
async function signInIfAsked(page: Page, ready: string): Promise<void> {
  const heading = page.getByRole('heading', { name: ready });
  await page.getByLabel('Password').or(heading).first().waitFor();
  if (await page.getByLabel('Password').isVisible()) {
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await heading.waitFor();
}

/** The live view of the task the address names: its task chosen and its region editor shown. */
async function expectLiveViewOf(page: Page, id: string): Promise<void> {
  await page.getByRole('heading', { name: 'Live view' }).waitFor();
  await page.getByRole('application').waitFor();
  const select = page.getByRole('combobox', { name: 'Task' });
  // The list of tasks arrives after the view: the chosen one is shown once its option exists.
  await select.locator(`option[value="${id}"]`).waitFor({ state: 'attached' });
  expect(await select.inputValue()).toBe(id);
  expect(new URL(page.url()).hash).toBe(`#/live/${id}`);
  expect(
    await page.getByRole('navigation').getByRole('link', { name: 'Live view' }).getAttribute('aria-current'),
  ).toBe('page');
}

beforeAll(async () => {
  expect(existsSync(CONSOLE), 'the console is built (npm run build) before this test').toBe(true);
  dataDir = mkdtempSync(join(tmpdir(), 'vc-console-links-'));
  engine = await spawnEngine(join(dataDir, 'data'), PASSWORD);
  const token = await signIn(engine.url, PASSWORD);
  taskId = (
    await callApi<{ task_id: string }>(engine.url, token, 'POST', '/api/task', {
      name: 'Loading bay',
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: pathToFileURL(VIDEO).href,
    })
  ).task_id;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopEngine(engine);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('console addresses', () => {
  it("opens a link to a task's live view in a fresh page, and a reload keeps it", async () => {
    const page = await openConsolePage(browser, pageErrors);
    await page.goto(`${engine.url}/#/live/${taskId}`);
    await signInIfAsked(page, 'Live view');
    await expectLiveViewOf(page, taskId);
    await page.reload();
    await expectLiveViewOf(page, taskId);
    await page.context().close();
  });

  it("opens the Tasks table's link to the live view in a new tab", async () => {
    const page = await openConsolePage(browser, pageErrors);
    await page.goto(`${engine.url}/#/tasks`);
    await signInIfAsked(page, 'Tasks');
    const link = page.getByRole('link', { name: 'Live view of task Loading bay' });
    expect(await link.getAttribute('href')).toBe(`#/live/${taskId}`);
    const [tab] = await Promise.all([
      page.context().waitForEvent('page'),
      link.click({ modifiers: ['Control'] }),
    ]);
    await signInIfAsked(tab, 'Live view');
    await expectLiveViewOf(tab, taskId);
    // The first tab stayed where it was.
    expect(new URL(page.url()).hash).toBe('#/tasks');
    await page.context().close();
  });

  it("opens a link to a task: the table with that task's editor, which closes back to the table", async () => {
    const page = await openConsolePage(browser, pageErrors);
    await page.goto(`${engine.url}/#/tasks`);
    await signInIfAsked(page, 'Tasks');
    const edit = page.getByRole('link', { name: 'Edit task Loading bay' });
    expect(await edit.getAttribute('href')).toBe(`#/tasks/${taskId}`);
    await page.goto(`${engine.url}/#/tasks/${taskId}`);
    await page.reload();
    const dialog = page.getByRole('dialog', { name: 'Edit task Loading bay' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Close dialog' }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe('#/tasks');
    expect(await dialog.count()).toBe(0);
    await page.context().close();
  });

  it('marks the field the engine names in its refusal, not a notice', async () => {
    const page = await openConsolePage(browser, pageErrors);
    const refusal = { code: 40001, msg: 'the receiver refuses callbacks from here', field: 'report_url' };
    await page.route(`${engine.url}/api/task`, (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({ status: 400, contentType: 'application/json', body: JSON.stringify(refusal) })
        : route.fallback(),
    );
    await page.goto(`${engine.url}/#/tasks`);
    await signInIfAsked(page, 'Tasks');
    await page.getByRole('button', { name: 'New task…' }).click();
    const wizard = page.getByRole('dialog', { name: 'Start a task' });
    await wizard.getByRole('radio', { name: 'Image' }).check();
    await startFromSource(wizard, 'builtin', /Motion detection/);
    const field = wizard.getByRole('textbox', { name: 'Callback URL' });
    await expect.poll(() => field.getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    expect(await wizard.getByText(refusal.msg).count()).toBe(1);
    expect(await field.getAttribute('aria-describedby')).toBeTruthy();
    await page.context().close();
    expect(pageErrors).toEqual([]);
  });
});
