import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIAL_PASSWORD_FILE } from '../engine/auth/initial-password';
import { launchChromium, openAccountMenu, presetSession } from './helpers/browser';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { FIXTURES } from './helpers/fixtures';
import { Mosquitto } from './helpers/mosquitto';
import { freePort } from './helpers/rtmp-source';

/**
 * Issue 34's smaller console items in Chromium against an engine of its own started without an
 * admin password (so with the random initial one): image and diff results that stay, a diff's
 * before/after view, a new tab that needs no second sign-in and a sign-out that ends every tab, the
 * MQTT topic and connection test against a real mosquitto, the default callback URL, and the prompt
 * to replace the initial password. Screenshots at 1280x720 in English and Chinese.
 */

const ROOT = resolve(import.meta.dirname, '..');
const CONSOLE = join(ROOT, 'out', 'renderer', 'index.html');
const SHOTS = join(ROOT, 'test-output', 'console-smaller');
const POLL = { timeout: 15_000 };
const BEFORE = join(FIXTURES, 'media', 'leuvenB.jpg');

let dataDir: string;
let after: string;
let engine: EngineProcess;
let initialPassword: string;
let token: string;
let browser: Browser;
let broker: Mosquitto;
const pageErrors: string[] = [];

const api = <T>(method: string, path: string, body?: unknown) =>
  callApi<T>(engine.url, token, method, path, body);

/** A signed-in console page (its own browser context: its own tabs) at `path`, collecting page errors. */
async function openPage(path: string, language = 'en', session = token): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  watch(page);
  await presetSession(page, session, { language });
  await page.goto(`${engine.url}/#${path}`);
  return page;
}

function watch(page: Page): void {
  page.on('pageerror', (error) => pageErrors.push(error.message));
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

beforeAll(async () => {
  expect(existsSync(CONSOLE), 'the console is built (npm run build) before this test').toBe(true);
  mkdirSync(SHOTS, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'vc-console-smaller-'));
  after = join(dataDir, 'leuvenB-after.jpg');
  const block = await sharp({ create: { width: 120, height: 90, channels: 3, background: '#d03020' } })
    .png()
    .toBuffer();
  await sharp(BEFORE)
    .composite([{ input: block, left: 400, top: 280 }])
    .jpeg()
    .toFile(after);
  broker = await Mosquitto.start({ users: { engine: 'broker-password' } });
  engine = await spawnEngine(join(dataDir, 'data'), '');
  initialPassword = readFileSync(join(dataDir, 'data', INITIAL_PASSWORD_FILE), 'utf8').trim();
  token = await signIn(engine.url, initialPassword);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopEngine(engine);
  await broker?.dispose();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('image and diff results', () => {
  it('stay when the operator leaves the screen and reloads; a pair compares before and after', async () => {
    const diff = await api<{ task_id: string }>('POST', '/api/task', {
      mode: 'diff',
      zapk_id: 'builtin',
      app_ids: ['change'],
    });
    const page = await openPage(`/images/${diff.task_id}`);
    await page.getByLabel('Before (image A)').setInputFiles(BEFORE);
    await page.getByLabel('After (image B)').setInputFiles(after);
    await page.getByRole('button', { name: 'Upload and analyse' }).click();
    const slider = page.getByRole('slider', { name: 'Compare before and after' });
    await slider.waitFor({ timeout: 30_000 });
    const regions = page.getByRole('img', { name: /changed regions? outlined/ });
    expect(await regions.locator('rect').count()).toBeGreaterThan(0);
    // The drawn region lies on the pasted block (400..520 x 280..370 in the frame's pixels).
    const box = await regions
      .locator('rect')
      .first()
      .evaluate((rect) => ({
        x: Number(rect.getAttribute('x')),
        y: Number(rect.getAttribute('y')),
        w: Number(rect.getAttribute('width')),
        h: Number(rect.getAttribute('height')),
      }));
    expect(box.x + box.w).toBeGreaterThan(400);
    expect(box.x).toBeLessThan(520);
    expect(box.y + box.h).toBeGreaterThan(280);
    expect(box.y).toBeLessThan(370);
    expect(await page.getByRole('img', { name: /^Before: leuvenB\.jpg/ }).count()).toBe(1);
    await slider.fill('30');
    await shot(page, 'images-diff-en');

    // Away to another screen and back: the result is still there, with its comparison.
    await page.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await expect.poll(() => new URL(page.url()).hash, POLL).toMatch(/^#\/tasks/);
    await page.getByRole('navigation').getByRole('link', { name: 'Images' }).click();
    await slider.waitFor(POLL);
    expect(await page.getByText('leuvenB.jpg → leuvenB-after.jpg').count()).toBe(1);

    // A reload: the page's images are gone, the engine's stored result is not.
    await page.reload();
    await page.getByRole('img', { name: 'Annotated frame of Scene change: change' }).waitFor(POLL);
    await page.getByText(/^Image 1 image 1, \d+ × \d+$/).waitFor(POLL);
    await page.getByText('The engine keeps the result of a pair').waitFor();
    await page
      .getByText(/px changed$/)
      .first()
      .waitFor();

    const zh = await openPage(`/images/${diff.task_id}`, 'zh-CN');
    await zh.locator('.result-image').first().waitFor(POLL);
    await zh.getByText('引擎只保存图片对的结果').waitFor();
    await shot(zh, 'images-diff-stored-zh');
    await page.context().close();
    await zh.context().close();
  }, 120_000);
});

describe('settings', () => {
  it('tests the MQTT connection with the entered settings, saves a topic and a default callback URL', async () => {
    const page = await openPage('/settings');
    await page.getByLabel('Broker URL (mqtt:// or mqtts://)').fill(broker.url);
    await page.getByLabel('User name', { exact: true }).fill('engine');
    await page.getByLabel('Password', { exact: true }).fill('wrong-password');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText('User name or password refused.').waitFor(POLL);
    await page.getByText('Check the user name and password the broker expects.').waitFor();
    await page.getByLabel('Password', { exact: true }).fill('broker-password');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText('Connected.', { exact: true }).waitFor(POLL);
    // Nothing was saved by the tests.
    expect(await api('GET', '/api/settings/mqtt')).toMatchObject({ url: '', password_set: false });

    await page.getByLabel('Topic').fill('plant-7/{task_id}/{app_id}');
    await page.getByRole('button', { name: 'Save MQTT settings' }).click();
    await expect
      .poll(async () => (await api<{ topic: string }>('GET', '/api/settings/mqtt')).topic, POLL)
      .toBe('plant-7/{task_id}/{app_id}');

    const callback = page.getByLabel('Callback URL for tasks without their own');
    await callback.fill('ftp://10.0.0.5/vision');
    await page.getByRole('button', { name: 'Save callback URL' }).click();
    await page.getByText('body.default_report_url: must be an http:// or https:// URL').waitFor(POLL);
    await callback.fill('http://10.0.0.5:9000/vision');
    await page.getByRole('button', { name: 'Save callback URL' }).click();
    await page.getByText('The callback URL was saved.').waitFor(POLL);
    expect(await api('GET', '/api/settings/callbacks')).toEqual({
      default_report_url: 'http://10.0.0.5:9000/vision',
    });
    await page.getByRole('button', { name: 'Test connection' }).scrollIntoViewIfNeeded();
    await shot(page, 'settings-mqtt-en');

    const zh = await openPage('/settings', 'zh-CN');
    await zh.getByLabel('代理地址（mqtt:// 或 mqtts://）').fill(`mqtt://127.0.0.1:${await freePort()}`);
    await zh.getByRole('button', { name: '测试连接' }).click();
    await zh.getByText('连接被拒绝。').waitFor(POLL);
    await zh.getByText('该主机和端口上没有服务在监听').waitFor();
    await zh.getByRole('button', { name: '测试连接' }).scrollIntoViewIfNeeded();
    await shot(zh, 'settings-mqtt-zh');
    await page.context().close();
    await zh.context().close();
  }, 90_000);
});

describe('tabs of one console', () => {
  it('a new tab takes the open tab’s session; signing out in one signs out the other', async () => {
    const own = await signIn(engine.url, initialPassword);
    const first = await openPage('/tasks', 'en', own);
    await first.getByRole('navigation').waitFor(POLL);
    // A second tab of the same browser profile, with nothing preset: no sign-in form.
    const second = await first.context().newPage();
    watch(second);
    await second.goto(`${engine.url}/#/system`);
    await second.getByRole('navigation').waitFor(POLL);
    expect(await second.getByRole('heading', { name: 'Sign in' }).count()).toBe(0);
    // Its token is the first tab's, kept only in its own sessionStorage.
    expect(await second.evaluate(() => JSON.parse(sessionStorage.getItem('vc.session') ?? '{}').token)).toBe(
      own,
    );
    expect(await second.evaluate(() => localStorage.getItem('vc.session'))).toBeNull();

    await openAccountMenu(second);
    await second.getByRole('button', { name: 'Sign out' }).click();
    await second.getByRole('heading', { name: 'Sign in' }).waitFor(POLL);
    await first.getByRole('heading', { name: 'Sign in' }).waitFor(POLL);
    expect(await first.evaluate(() => sessionStorage.getItem('vc.session'))).toBeNull();
    await first.context().close();
  }, 60_000);
});

describe('the initial password', () => {
  it('is to be replaced after signing in with it; the change asks for the current one', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page = await context.newPage();
    watch(page);
    await page.goto(engine.url);
    await page.getByLabel('Password').fill(initialPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const notice = page.getByRole('alert').filter({ hasText: 'You signed in with the initial password' });
    await notice.waitFor(POLL);
    await shot(page, 'initial-password-en');
    await notice.getByRole('link', { name: 'Change the password' }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor(POLL);
    await page.getByLabel('Current password').fill('not-the-initial-one');
    await page.getByLabel('New password', { exact: true }).fill('chosen-by-the-operator');
    await page.getByLabel('Repeat the new password').fill('chosen-by-the-operator');
    await page.getByRole('button', { name: 'Change password', exact: true }).click();
    await page.getByText('This is not the current password.').waitFor(POLL);
    await page.getByLabel('Current password').fill(initialPassword);
    await page.getByRole('button', { name: 'Change password', exact: true }).click();
    await page.getByText('The password was changed. Sign in with the new password.').waitFor(POLL);
    expect(existsSync(join(dataDir, 'data', INITIAL_PASSWORD_FILE))).toBe(false);
    await page.getByLabel('Password').fill('chosen-by-the-operator');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation').waitFor(POLL);
    expect(await page.getByText('You signed in with the initial password').count()).toBe(0);

    // The same prompt in Chinese (a session the engine marked, in a context of its own).
    const chosen = await signIn(engine.url, 'chosen-by-the-operator');
    const zhContext = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const zh = await zhContext.newPage();
    watch(zh);
    await zh.addInitScript((token) => {
      const session = { token, username: 'admin', expiresAt: Date.now() + 60_000, initialPassword: true };
      sessionStorage.setItem('vc.session', JSON.stringify(session));
      localStorage.setItem('vc.language', 'zh-CN');
    }, chosen);
    await zh.goto(`${engine.url}/#/settings`);
    await zh.getByText('你使用的是引擎首次启动时生成的初始密码登录').waitFor(POLL);
    await shot(zh, 'initial-password-zh');
    await context.close();
    await zhContext.close();
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
