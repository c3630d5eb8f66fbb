import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openAccountMenu, openConsolePage, presetSession } from './helpers/browser';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { FIXTURES, VIDEO } from './helpers/fixtures';

/*
 * Defects of issue 16 in headless Chromium against the built engine: typed region points in the
 * new-task wizard (Enter or Apply used to reload the page to `/?`), Sign out that ends the token
 * on the engine, not only in the tab, and the packages screen: the refusal to uninstall a package in
 * use names the tasks, and an uninstalled built-in package can be restored.
 */

const ROOT = resolve(import.meta.dirname, '..');
const CONSOLE = join(ROOT, 'out', 'renderer', 'index.html');
const PASSWORD = 'defects-console-password';

let engine: EngineProcess;
let browser: Browser;
let dataDir: string;
const pageErrors: string[] = [];

async function signedInPage(path: string, heading: string): Promise<{ page: Page; token: string }> {
  const token = await signIn(engine.url, PASSWORD);
  const page = await openConsolePage(browser, pageErrors);
  await presetSession(page, token);
  await page.goto(`${engine.url}/#${path}`);
  await page.getByRole('heading', { name: heading }).waitFor();
  return { page, token };
}

beforeAll(async () => {
  expect(existsSync(CONSOLE), 'the console is built (npm run build) before this test').toBe(true);
  dataDir = mkdtempSync(join(tmpdir(), 'vc-defects-console-'));
  engine = await spawnEngine(join(dataDir, 'data'), PASSWORD);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopEngine(engine);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('new-task wizard: typed region points (defect 1)', () => {
  for (const [mode, app, appName, how] of [
    ['Image', 'motion', 'Motion detection', 'Enter'],
    ['Change detection', 'change', 'Scene change', 'Apply'],
  ] as const) {
    it(`gives a ${mode} task a region typed as points and applied with ${how}`, async () => {
      const { page, token } = await signedInPage('/tasks', 'Tasks');
      const before = page.url();
      await page.getByRole('button', { name: 'New task…' }).click();
      const wizard = page.getByRole('dialog', { name: 'Start a task' });
      await wizard.getByRole('radio', { name: mode }).check();
      await wizard.getByRole('button', { name: 'Next' }).click();
      await wizard.getByRole('combobox', { name: 'Package' }).selectOption('builtin');
      await wizard.getByRole('checkbox', { name: new RegExp(appName) }).check();
      await wizard.getByRole('button', { name: 'Next' }).click();

      const points = wizard.getByRole('textbox', { name: 'Points (x,y …)' });
      await points.fill('100,80 600,80 600,500');
      if (how === 'Enter') await points.press('Enter');
      else await wizard.getByRole('button', { name: 'Apply' }).click();
      // Still the same page and the same step: no reload to `/?`, the region is taken.
      await wizard.getByText('3 points').waitFor();
      expect(page.url()).toBe(before);
      expect(await wizard.locator('[aria-current="step"]').textContent()).toBe('Regions');

      await wizard.getByRole('button', { name: 'Next' }).click();
      const sent = page.waitForRequest(
        (request) => request.method() === 'POST' && request.url().endsWith('/api/task'),
      );
      await wizard.getByRole('button', { name: 'Start task' }).click();
      const body = (await sent).postDataJSON() as { app_configs?: unknown };
      expect(body.app_configs).toEqual([
        {
          app_id: app,
          polygon: [
            [100, 80],
            [600, 80],
            [600, 500],
          ],
        },
      ]);
      await wizard.waitFor({ state: 'detached' });
      // Closed again, so the packages test below sees only its own task using the package.
      const started = (await (await (await sent).response())?.json()) as { data: { task_id: string } };
      await callApi(engine.url, token, 'DELETE', `/api/task/${started.data.task_id}`);
      await page.context().close();
      expect(pageErrors).toEqual([]);
    }, 60_000);
  }
});

describe('sign out (defect 5)', () => {
  it('revokes the token on the engine, then shows the sign-in screen', async () => {
    const { page, token } = await signedInPage('/tasks', 'Tasks');
    await openAccountMenu(page);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Password').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('vc.session'))).toBeNull();
    await expect(callApi(engine.url, token, 'GET', '/api/tasks')).rejects.toThrow(/401|40102/);
    await page.context().close();
    expect(pageErrors).toEqual([]);
  }, 60_000);
});

describe('packages screen (defects 9b and 6)', () => {
  it('names the running tasks that keep a package, then restores the built-in package once it is gone', async () => {
    const token = await signIn(engine.url, PASSWORD);
    const { task_id } = await callApi<{ task_id: string }>(engine.url, token, 'POST', '/api/task', {
      name: 'Dock door 3',
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: pathToFileURL(VIDEO).href,
    });
    const { page } = await signedInPage('/packages', 'Application packages');
    const uninstall = async () => {
      await page.getByRole('button', { name: 'Uninstall Built-in analysis' }).click();
      await page
        .getByRole('dialog', { name: 'Uninstall package' })
        .getByRole('button', { name: 'Uninstall' })
        .click();
    };
    await uninstall();
    const refusal = page.getByRole('alert').filter({ hasText: 'cannot be uninstalled' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe(
      'Package builtin cannot be uninstalled while running tasks use it: Dock door 3. Close them first.',
    );

    await callApi(engine.url, token, 'DELETE', `/api/task/${task_id}`);
    await uninstall();
    await page.getByRole('status').filter({ hasText: 'Package builtin uninstalled.' }).waitFor();
    await page.getByRole('button', { name: 'Restore the built-in package' }).click();
    await page.getByRole('status').filter({ hasText: 'Package builtin 1.0.0 installed.' }).waitFor();
    await page.getByRole('button', { name: 'Uninstall Built-in analysis' }).waitFor();
    expect(await page.getByRole('button', { name: 'Restore the built-in package' }).count()).toBe(0);
    await page.context().close();
    expect(pageErrors).toEqual([]);
  }, 90_000);
});

describe('rule editor (defect 7)', () => {
  it('marks min above max as it is typed, asks before Escape or × drop edits, and keeps Save in reach at 1280x720', async () => {
    const { page } = await signedInPage('/packages', 'Application packages');
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByRole('button', { name: 'Edit the rule of Motion detection' }).click();
    const editor = page.getByRole('dialog', { name: 'Rule of Motion detection' });
    // The class is picked from the model's labels.
    const classId = editor.getByRole('combobox', { name: 'Class ID' });
    expect(await classId.inputValue()).toBe('0');
    expect(await classId.locator('option').allTextContents()).toEqual(['0 · motion']);
    await editor.getByRole('spinbutton', { name: 'Maximum size (px)' }).fill('100');
    await editor.getByRole('spinbutton', { name: 'Minimum size (px)' }).fill('500');
    // No Save pressed: the field says so at once.
    const max = editor.getByRole('spinbutton', { name: 'Maximum size (px)' });
    expect(await max.getAttribute('aria-invalid')).toBe('true');
    expect(await editor.getByText('The minimum 500 is greater than this maximum 100.').count()).toBe(1);

    // Save is on screen without scrolling the dialog.
    const save = await editor.getByRole('button', { name: 'Save rule' }).boundingBox();
    expect(save !== null && save.y >= 0 && save.y + save.height <= 720).toBe(true);

    for (const leave of ['Escape', '×'] as const) {
      if (leave === 'Escape') await page.keyboard.press('Escape');
      else await editor.getByRole('button', { name: 'Close dialog' }).first().click();
      const ask = page.getByRole('dialog', { name: 'Discard changes?' });
      await ask.waitFor();
      await ask.getByRole('button', { name: 'Cancel' }).click();
      await ask.waitFor({ state: 'detached' });
      expect(await editor.isVisible()).toBe(true);
      expect(await editor.getByRole('spinbutton', { name: 'Minimum size (px)' }).inputValue()).toBe('500');
    }
    await page.keyboard.press('Escape');
    await page
      .getByRole('dialog', { name: 'Discard changes?' })
      .getByRole('button', { name: 'Discard changes' })
      .click();
    await editor.waitFor({ state: 'detached' });
    await page.context().close();
    expect(pageErrors).toEqual([]);
  }, 60_000);
});

describe('images screen (defect 10)', () => {
  it("counts the images received in the task's status line once a result is in", async () => {
    const token = await signIn(engine.url, PASSWORD);
    const { task_id } = await callApi<{ task_id: string }>(engine.url, token, 'POST', '/api/task', {
      name: 'Gate photos',
      mode: 'image',
      zapk_id: 'builtin',
      app_ids: ['motion'],
    });
    const { page } = await signedInPage(`/images/${task_id}`, 'Images');
    // In the operator's words, never the engine's English line ("running, 0 images received").
    const status = page.locator('.upload-form .image-count');
    expect(await status.textContent()).toBe('Images analysed: 0');
    await page.getByLabel('Image files').setInputFiles(join(FIXTURES, 'media', 'leuvenB.jpg'));
    await page.getByRole('button', { name: 'Upload and analyse' }).click();
    await page.getByRole('heading', { name: /leuvenB\.jpg/ }).waitFor();
    await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('Images analysed: 1');
    await callApi(engine.url, token, 'DELETE', `/api/task/${task_id}`);
    await page.context().close();
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
