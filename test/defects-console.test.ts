import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openAccountMenu, openConsolePage, presetSession } from './helpers/browser';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';

/*
 * Defects of issue 16 in headless Chromium against the built engine: typed region points in the
 * new-task wizard (Enter or Apply used to reload the page to `/?`), and Sign out that ends the token
 * on the engine, not only in the tab.
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
      const { page } = await signedInPage('/tasks', 'Tasks');
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
