import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Language, type MessageKey, translate } from '../renderer/src/i18n';
import { type AxeViolation, blockingViolations } from './helpers/axe';
import { openAccountMenu } from './helpers/browser';
import type { ConsoleEngine } from './helpers/console-engine';
import { VIDEO } from './helpers/fixtures';
import { startFrontDoor } from './helpers/front-door';

/*
 * Accessibility and looks in Chromium, against an engine in its own process serving the built
 * console: axe-core on every screen and state an operator reaches (sign-in, each screen, the start
 * wizard's steps, the task and rule editors, the account menu), in English and Chinese, light and
 * dark, with no serious or critical violation left; and screenshots of the main screens at 1280x720
 * and 1920x1080 in each language and theme, to test-output/console/access-*.png, for a person to look at.
 */

const ROOT = resolve(import.meta.dirname, '..');
const SHOTS = join(ROOT, 'test-output', 'console');
const POLL = { timeout: 30_000 };
/** A camera with stored alarms: the Alarms and Events screens have rows and a detail to check. */
const ALARM_CAMERA = 'a1b2c3d4-0000-4000-8000-000000000002';
const SIZES = [
  { width: 1280, height: 720 },
  { width: 1920, height: 1080 },
];

let c: ConsoleEngine;
let taskId: string;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  ({ c, taskId } = await startFrontDoor('console-access', ALARM_CAMERA));
}, 180_000);

afterAll(async () => {
  await c?.api('DELETE', `/api/task/${taskId}`).catch(() => undefined);
  await c?.stop();
});

/** A screen as the operator sees it: its path, and what to do there first (open a dialog, a menu). */
interface ScreenState {
  name: string;
  path: string;
  /** Shot at both sizes (the main screens); the dialogs and menus are checked, not shot. */
  shot?: boolean;
  act?: (page: Page, t: (key: MessageKey, params?: Record<string, string>) => string) => Promise<void>;
}

const SCREENS: ScreenState[] = [
  { name: 'tasks', path: '/tasks', shot: true },
  { name: 'task-editor', path: '', shot: true },
  { name: 'live', path: '', shot: true },
  { name: 'wall', path: '/wall', shot: true },
  { name: 'alarms', path: '/alarms', shot: true },
  { name: 'events', path: '/events', shot: true },
  { name: 'event', path: `/events/${ALARM_CAMERA}/1` },
  { name: 'images', path: '/images', shot: true },
  { name: 'packages', path: '/packages', shot: true },
  { name: 'optimization', path: '', shot: true },
  { name: 'system', path: '/system', shot: true },
  { name: 'settings', path: '/settings', shot: true },
  { name: 'account-menu', path: '/tasks', act: (page) => openAccountMenu(page) },
  {
    name: 'ignore-dialog',
    path: '/alarms',
    act: async (page, t) => {
      await page.getByRole('button', { name: t('items.ignore') }).click();
      await page.getByRole('dialog').waitFor(POLL);
    },
  },
  {
    name: 'close-confirm',
    path: '/tasks',
    act: async (page, t) => {
      await page.getByRole('button', { name: t('tasks.closeLabel', { id: 'Front door' }) }).click();
      await page.getByRole('dialog').waitFor(POLL);
    },
  },
  {
    name: 'rule-editor',
    path: '/packages',
    act: async (page, t) => {
      await page
        .getByRole('button', { name: t('packages.editRuleLabel', { app: 'Person detection' }) })
        .click();
      await page.getByRole('dialog').waitFor(POLL);
    },
  },
  {
    name: 'wizard-source',
    path: '/tasks',
    act: async (page, t) => {
      await page.getByRole('button', { name: t('tasks.new') }).click();
      await page.getByRole('dialog', { name: t('wizard.title') }).waitFor(POLL);
    },
  },
  {
    name: 'wizard-apps',
    path: '/tasks',
    act: async (page, t) => {
      const wizard = await wizardAt(page, t);
      await wizard.getByRole('combobox', { name: t('wizard.package') }).selectOption('coco-yolox-nano');
    },
  },
  {
    name: 'wizard-regions',
    path: '/tasks',
    act: async (page, t) => {
      await wizardAtRegions(page, t);
    },
  },
  {
    name: 'wizard-output',
    path: '/tasks',
    act: async (page, t) => {
      const wizard = await wizardAtRegions(page, t);
      await wizard.getByRole('button', { name: t('wizard.next') }).click();
      await wizard.getByRole('button', { name: t('wizard.start') }).waitFor(POLL);
    },
  },
];

/** The wizard opened on the fixture video, on its apps step. */
/** The wizard on its regions step, for the built-in package's first app. */
async function wizardAtRegions(page: Page, t: (key: MessageKey) => string) {
  const wizard = await wizardAt(page, t);
  await wizard.getByRole('combobox', { name: t('wizard.package') }).selectOption('builtin');
  await wizard.getByRole('checkbox').first().check();
  await wizard.getByRole('button', { name: t('wizard.next') }).click();
  return wizard;
}

async function wizardAt(page: Page, t: (key: MessageKey) => string) {
  await page.getByRole('button', { name: t('tasks.new') }).click();
  const wizard = page.getByRole('dialog', { name: t('wizard.title') });
  await wizard.getByRole('textbox', { name: t('wizard.videoUrl') }).fill(VIDEO);
  await wizard.getByRole('button', { name: t('wizard.next') }).click();
  await wizard.getByRole('combobox', { name: t('wizard.package') }).waitFor(POLL);
  return wizard;
}

const pathOf = (state: ScreenState) =>
  state.path ||
  { 'task-editor': `/tasks/${taskId}`, live: `/live/${taskId}`, optimization: `/optimization/${taskId}` }[
    state.name
  ] ||
  '/tasks';

/** Waits until the screen has settled: its requests answered, nothing marked busy. */
async function settle(page: Page): Promise<void> {
  await page.locator('header').first().waitFor(POLL);
  await page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => undefined);
  await page.waitForTimeout(500);
}

const describeViolations = (where: string, violations: AxeViolation[]) =>
  violations.map((v) => `${where}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.join(' | ')}`);

const COMBOS: Array<{ language: Language; theme: 'light' | 'dark' }> = [
  { language: 'en', theme: 'light' },
  { language: 'en', theme: 'dark' },
  { language: 'zh-CN', theme: 'light' },
  { language: 'zh-CN', theme: 'dark' },
];

describe.each(COMBOS)('every screen in $language, $theme', ({ language, theme }) => {
  const t = (key: MessageKey, params?: Record<string, string>) => translate(language, key, params);

  it('signs in with no serious or critical axe violation', async () => {
    const page = await c.browser.newPage({ viewport: SIZES[0] });
    await page.addInitScript(
      ({ language, theme }) => {
        localStorage.setItem('vc.language', language);
        localStorage.setItem('vc.theme', theme);
      },
      { language, theme },
    );
    await page.goto(c.engine.url);
    await page.locator('input[type="password"]').waitFor(POLL);
    const found = describeViolations('sign-in', await blockingViolations(page));
    expect(await page.locator('h1').count()).toBe(1);
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await page.screenshot({ path: join(SHOTS, `access-sign-in-${language}-${theme}-${size.width}.png`) });
    }
    await page.close();
    expect(found).toEqual([]);
  }, 60_000);

  it('shows each signed-in screen and state with no serious or critical axe violation', async () => {
    const found: string[] = [];
    for (const state of SCREENS) {
      const page = await c.open(pathOf(state), { ...SIZES[0], language, theme });
      await settle(page);
      await state.act?.(page, t);
      if (state.act) await page.waitForTimeout(500);
      found.push(...describeViolations(state.name, await blockingViolations(page)));
      // One h1 names the screen for a screen reader's heading list (axe rates its absence moderate).
      const h1 = await page.locator('h1').count();
      if (h1 !== 1) found.push(`${state.name}: ${h1} h1 headings, not 1`);
      if (state.shot)
        for (const size of SIZES) {
          await page.setViewportSize(size);
          await page.waitForTimeout(300);
          await page.screenshot({
            path: join(SHOTS, `access-${state.name}-${language}-${theme}-${size.width}.png`),
          });
        }
      await page.close();
    }
    expect(found).toEqual([]);
  }, 600_000);
});
