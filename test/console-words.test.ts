import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { type MessageKey, translate } from '../renderer/src/i18n';
import type { ConsoleEngine } from './helpers/console-engine';
import { startFrontDoor } from './helpers/front-door';
import { freePort } from './helpers/rtmp-source';

/*
 * Plain words in Chromium, against an engine in its own process serving the built console: cameras,
 * apps, classes and rules by name where a name exists (the Live view and optimization pickers, the
 * alarm filters); a wizard start on a camera that refuses the connection, worded with a hint in
 * English and in Chinese, the engine's text kept under details; the rule editor's cross-field
 * checks at the field before anything is sent, and its stationary control. Screenshots (1280x720)
 * go to test-output/console/words-*.png.
 */

const ROOT = resolve(import.meta.dirname, '..');
const SHOTS = join(ROOT, 'test-output', 'console');
const POLL = { timeout: 30_000 };
/** An alarm camera the engine has no task for: named by its short id, as nothing names it. */
const OLD_CAMERA = 'a1b2c3d4-0000-4000-8000-000000000001';

let c: ConsoleEngine;
let taskId: string;
const pages: Page[] = [];

beforeAll(async () => {
  ({ c, taskId } = await startFrontDoor('console-words', OLD_CAMERA));
}, 180_000);

afterAll(async () => {
  await c?.api('DELETE', `/api/task/${taskId}`).catch(() => undefined);
  await c?.stop();
});

async function open(path: string, language = 'en'): Promise<Page> {
  const page = await c.open(path, { width: 1280, height: 720, language });
  pages.push(page);
  return page;
}

const optionsOf = (page: Page, label: string) =>
  page.getByRole('combobox', { name: label, exact: true }).locator('option').allTextContents();

describe('names, never ids', () => {
  it('names the camera and its apps in the Live view and optimization pickers', async () => {
    const live = await open('/live');
    await expect
      .poll(() => optionsOf(live, 'Task'), POLL)
      .toEqual(['Choose a task…', 'Front door · Person detection']);
    await live
      .getByRole('combobox', { name: 'Task', exact: true })
      .selectOption({ label: 'Front door · Person detection' });
    await live.getByRole('link', { name: 'Effect optimization' }).waitFor(POLL);
    await live.screenshot({ path: join(SHOTS, 'words-live-picker.png') });
    const optimization = await open('/optimization');
    await expect
      .poll(() => optionsOf(optimization, 'Task'), POLL)
      .toEqual(['Choose a video task…', 'Front door · Person detection']);
  }, 60_000);

  it("says the Live view's figures in Chinese, never the engine's English line", async () => {
    const live = await open(`/live/${taskId}`, 'zh-CN');
    const meta = live.locator('.live-meta');
    await expect.poll(() => meta.textContent(), POLL).toContain('帧/秒');
    const { dump } = await c.api<TaskView>('GET', `/api/task/${taskId}`);
    expect(dump).toMatch(/^running/);
    expect(await meta.textContent()).not.toContain('running');
  }, 60_000);

  it('offers apps and classes by name in the review filters, and names them in the items', async () => {
    const page = await open('/alarms');
    await expect.poll(() => optionsOf(page, 'App'), POLL).toEqual(['Any', 'Person detection']);
    expect(await optionsOf(page, 'Class')).toEqual(['Any', 'person']);
    // Choosing a named class still filters by its id.
    const classes = page.getByRole('combobox', { name: 'Class', exact: true });
    await classes.selectOption({ label: 'person' });
    expect(await classes.inputValue()).toBe('0');
    // The rows and the detail name them too.
    await expect
      .poll(() => page.locator('.alarm-row .sub').nth(1).textContent(), POLL)
      .toMatch(/· Person detection: person$/);
    expect(await page.locator('.alarm-row .sub').first().textContent()).toMatch(/· person$/);
    expect(await page.locator('.alarm-detail .meta').textContent()).toMatch(
      /^Classes person · apps Person detection ·/,
    );
    await page.screenshot({ path: join(SHOTS, 'words-alarm-filters.png') });
    const zh = await open('/alarms', 'zh-CN');
    await expect.poll(() => optionsOf(zh, '应用'), POLL).toEqual(['全部', 'Person detection']);
  }, 60_000);
});

describe('the built-in package', () => {
  it('is named in Chinese on the Packages screen', async () => {
    const page = await open('/packages', 'zh-CN');
    await page.getByRole('heading', { name: /^内置分析/ }).waitFor(POLL);
    const names = await page.locator('tbody th[scope="row"]').allTextContents();
    expect(names.slice(0, 3)).toEqual(['移动侦测', '区域入侵', '场景变化']);
    await page.screenshot({ path: join(SHOTS, 'words-packages-zh-CN.png') });
  }, 60_000);
});

describe('engine refusals in plain words', () => {
  /** Starts a task on a camera whose port is closed, through the wizard, in the page's language. */
  async function startOnClosedPort(language: 'en' | 'zh-CN'): Promise<Page> {
    const t = (key: MessageKey) => translate(language, key);
    const page = await open('/tasks', language);
    await page.getByRole('button', { name: t('tasks.new') }).click();
    const wizard = page.getByRole('dialog', { name: t('wizard.title') });
    const url = `rtsp://127.0.0.1:${await freePort()}/stream1`;
    const source = wizard.getByRole('textbox', { name: t('wizard.videoUrl') });
    await source.fill(url);
    // A preview first: its refusal is replaced by the start's, one at a time.
    await wizard.getByRole('button', { name: t('wizard.preview'), exact: true }).click();
    await wizard.getByText(t('refusal.source.refused')).waitFor(POLL);
    await wizard.getByRole('button', { name: t('wizard.next') }).click();
    await wizard.getByRole('combobox', { name: t('wizard.package') }).selectOption('builtin');
    await wizard.getByRole('checkbox', { name: /motion/ }).check();
    await wizard.getByRole('button', { name: t('wizard.next') }).click();
    await wizard.getByRole('button', { name: t('wizard.next') }).click();
    await wizard.getByRole('button', { name: t('wizard.start') }).click();
    // Back on the source step: the message at the field, one notice with the hint and the details.
    await source.waitFor(POLL);
    await wizard.locator('.refusal-hint').waitFor(POLL);
    expect(await source.getAttribute('aria-invalid')).toBe('true');
    const alerts = await wizard.getByRole('alert').allTextContents();
    expect(alerts.filter((text) => text.includes(t('refusal.source.refused')))).toHaveLength(1);
    expect(await wizard.locator('.refusal-hint').allTextContents()).toEqual([
      t('refusal.source.refused.hint'),
    ]);
    const details = wizard.locator('.refusal-details');
    expect(await details.count()).toBe(1);
    await details.locator('summary').click();
    expect(await details.locator('code').textContent()).toMatch(
      /^50301: video_url: the source could not be opened/,
    );
    await page.screenshot({ path: join(SHOTS, `words-wizard-refused-${language}.png`) });
    return page;
  }

  it('says the camera refused the connection and what to check, in English', async () => {
    await startOnClosedPort('en');
  }, 120_000);

  it('says it in Chinese, with no engine text outside the details', async () => {
    const page = await startOnClosedPort('zh-CN');
    const wizard = page.getByRole('dialog', { name: translate('zh-CN', 'wizard.title') });
    const shown = await wizard.getByRole('alert').evaluateAll((alerts) =>
      alerts.map((alert) => {
        const copy = alert.cloneNode(true) as HTMLElement;
        for (const details of copy.querySelectorAll('details')) details.remove();
        return copy.textContent ?? '';
      }),
    );
    expect(shown.join(' ')).not.toMatch(/video_url|could not|refused|50301/);
  }, 120_000);
});

describe('the rule editor', () => {
  it('shows a cross-field problem at the field before sending, and offers stationary', async () => {
    const page = await open('/packages');
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PUT') sent.push(request.url());
    });
    await page.getByRole('button', { name: 'Edit the rule of Person detection' }).click();
    const dialog = page.getByRole('dialog', { name: /Rule of Person detection/ });
    await dialog.getByRole('spinbutton', { name: 'Inertia: matched frames' }).fill('6');
    const frames = dialog.getByRole('spinbutton', { name: 'Inertia: latest analysed frames' });
    await frames.fill('5');
    const problem = 'An object cannot be matched in 6 of only 5 frames: make this at least 6.';
    await dialog.getByRole('alert').filter({ hasText: problem }).waitFor(POLL);
    expect(await frames.getAttribute('aria-invalid')).toBe('true');
    await dialog.getByRole('button', { name: 'Save rule' }).click();
    await frames.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'words-rule-inertia.png') });
    expect(sent).toEqual([]);
    await frames.fill('8');
    await dialog.getByRole('combobox', { name: 'An object standing still' }).selectOption('once');
    await dialog.getByRole('button', { name: 'Save rule' }).click();
    await dialog.waitFor({ state: 'detached', ...POLL });
    const listed = await c.api<
      Array<{ zapk_id: string; apps: Record<string, { rule: Record<string, unknown> }> }>
    >('GET', '/api/zapk');
    const rule = listed.find((pkg) => pkg.zapk_id === 'coco-yolox-nano')?.apps.person?.rule;
    expect([rule?.inertia, rule?.stationary]).toEqual([{ hits: 6, frames: 8 }, 'once']);
    expect(sent).toHaveLength(1);
  }, 60_000);
});
