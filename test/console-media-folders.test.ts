import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SettingsView, VisionConsoleApi } from '../preload/api';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { TEST_MEDIA_DIRS } from './helpers/fixtures';

/*
 * The media folders in the console, in Chromium against a real engine (its own process, serving the
 * built console of `npm run build`, started with the tests' media folders): the web console shows
 * the engine's read-only, the desktop's Settings screen edits them, and the start wizard points to
 * the setting when a file is refused.
 *
 * The desktop part runs the same built console with a stand-in for the preload's window.visionConsole,
 * ONLY because the Electron binary cannot run on this machine: engine calls go to the real engine
 * (with the token main would add), and the settings calls (getSettings, chooseMediaDir, saveSettings,
 * relaunch) answer as main does and record what the page asked. Main's side of those channels is
 * tested in main-ipc.test.ts.
 */

/** How long the page may take to show something (a loaded machine is slow, never wrong). */
const POLL = { timeout: 20_000 };
/** A file that exists, in none of the engine's media folders. */
const OUTSIDE = '/etc/hostname';

let c: ConsoleEngine;

beforeAll(async () => {
  c = await startConsoleEngine('console-media');
}, 120_000);

afterAll(async () => c?.stop());

/** What the stand-in main knows: the settings file's view, and what the page asked of it. */
const DESKTOP_VIEW: SettingsView = {
  saved: { port: 0, lan: false, data_dir: '', media_dirs: null },
  running: {
    url: 'http://127.0.0.1:1',
    host: '127.0.0.1',
    port: 1,
    dataDir: '/data',
    mediaDirs: ['/data/media', '/home/op/Videos'],
  },
  defaultDataDir: '/data',
  defaultMediaDirs: ['/data/media', '/home/op/Videos'],
  portFromEnv: false,
};

interface DesktopRecord {
  saved: unknown[];
  relaunched: number;
}

/** A console page as the desktop app shows it: window.visionConsole stands in for the preload. */
async function openDesktop(path: string): Promise<Page> {
  const page = await c.browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.addInitScript(
    ({ token, initial, chosen }) => {
      const record: DesktopRecord = { saved: [], relaunched: 0 };
      (window as unknown as { desktop: DesktopRecord }).desktop = record;
      const view: SettingsView = structuredClone(initial);
      const api: VisionConsoleApi = {
        async request({ method, path, query, body }) {
          const url = new URL(path, window.location.origin);
          for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, String(value));
          const headers: Record<string, string> = { authorization: `Bearer ${token}` };
          if (body !== undefined) headers['content-type'] = 'application/json';
          const answer = await fetch(url, {
            method,
            headers,
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          return { status: answer.status, body: await answer.json() };
        },
        cancelRequest: async () => null,
        openZapk: async () => null,
        installZapk: () => Promise.reject(new Error('not in this test')),
        installZapkData: () => Promise.reject(new Error('not in this test')),
        info: async () => ({ version: '0.0.0', engineUrl: window.location.origin }),
        getSettings: async () => structuredClone(view),
        async saveSettings(patch) {
          record.saved.push(patch);
          view.saved = { ...view.saved, ...patch };
          return structuredClone(view);
        },
        chooseDataDir: async () => null,
        chooseMediaDir: async () => chosen,
        async relaunch() {
          record.relaunched++;
        },
        onEvent: () => () => {},
        onDelivery: () => () => {},
        engineState: async () => ({
          state: 'running',
          url: window.location.origin,
          pid: 1,
          since: Date.now(),
          restarts: 0,
        }),
        onEngineState: () => () => {},
      };
      (window as unknown as { visionConsole: VisionConsoleApi }).visionConsole = api;
    },
    { token: c.token, initial: DESKTOP_VIEW, chosen: '/srv/clips' },
  );
  await page.goto(`${c.engine.url}/#${path}`);
  return page;
}

const desktopRecord = (page: Page) =>
  page.evaluate(() => (window as unknown as { desktop: DesktopRecord }).desktop);

/** The folders a list shows, in order. */
const folders = (list: ReturnType<Page['locator']>) => list.locator('li code').allTextContents();

/** Opens the start wizard and previews a file outside the media folders. */
async function previewOutside(page: Page) {
  await page.getByRole('button', { name: 'New task…' }).click();
  const wizard = page.getByRole('dialog', { name: 'Start a task' });
  await wizard.getByRole('textbox', { name: 'Source URL' }).fill(OUTSIDE);
  await wizard.getByRole('button', { name: 'Preview' }).click();
  await wizard.getByText('There is no video file at this path in the engine’s media folders.').waitFor(POLL);
  return wizard;
}

describe('the web console', () => {
  it("lists the engine's media folders read-only in Settings", async () => {
    const page = await c.open('/settings');
    const engineCard = page.locator('section.card', { has: page.getByRole('heading', { name: 'Engine' }) });
    const list = engineCard.locator('.folder-list');
    await list.waitFor(POLL);
    expect(await folders(list)).toEqual([...TEST_MEDIA_DIRS]);
    expect(await engineCard.getByRole('button', { name: /Remove/ }).count()).toBe(0);
    await engineCard.getByText('--media-dir on the command line, or media_dirs in settings.json').waitFor();
    await page.close();
  }, 60_000);

  it('the wizard says where a refused file must be, and how the operator allows its folder', async () => {
    const page = await c.open('/tasks');
    const wizard = await previewOutside(page);
    await wizard
      .getByRole('note')
      .getByText(/Only video files in the engine’s media folders can be sources \(Settings lists them\)/)
      .waitFor(POLL);
    await page.close();
  }, 60_000);
});

describe('the desktop console (a stand-in for the preload)', () => {
  it('adds a media folder from the native dialog, removes one, saves only that, and offers the restart', async () => {
    const page = await openDesktop('/settings');
    const form = page.locator('form', { has: page.getByRole('group', { name: 'Media folders' }) });
    const list = form.getByRole('group', { name: 'Media folders' }).locator('.folder-list');
    await list.waitFor(POLL);
    expect(await folders(list)).toEqual(['/data/media', '/home/op/Videos']);
    // What the running engine uses is shown beside the form.
    const running = page.locator('dl.facts .folder-list');
    expect(await folders(running)).toEqual(['/data/media', '/home/op/Videos']);
    expect(await form.getByRole('button', { name: 'Use the defaults' }).isDisabled()).toBe(true);

    await form.getByRole('button', { name: 'Add folder…' }).click();
    await expect.poll(() => folders(list), POLL).toEqual(['/data/media', '/home/op/Videos', '/srv/clips']);
    // The same folder chosen again is not listed twice.
    await form.getByRole('button', { name: 'Add folder…' }).click();
    await form.getByRole('button', { name: 'Remove /home/op/Videos' }).click();
    expect(await folders(list)).toEqual(['/data/media', '/srv/clips']);
    expect((await desktopRecord(page)).saved).toEqual([]);

    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved settings apply after a restart.').waitFor(POLL);
    // Only what changed: a data folder or port sent again would be asked for again by main.
    expect((await desktopRecord(page)).saved).toEqual([{ media_dirs: ['/data/media', '/srv/clips'] }]);
    await page.getByRole('button', { name: 'Restart now' }).click();
    await expect.poll(async () => (await desktopRecord(page)).relaunched, POLL).toBe(1);

    // The last folder cannot be removed; the defaults come back with one button.
    await form.getByRole('button', { name: 'Remove /data/media' }).click();
    expect(await form.getByRole('button', { name: 'Remove /srv/clips' }).isDisabled()).toBe(true);
    await form.getByRole('button', { name: 'Use the defaults' }).click();
    expect(await folders(list)).toEqual(['/data/media', '/home/op/Videos']);
    await form.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(async () => (await desktopRecord(page)).saved, POLL)
      .toEqual([{ media_dirs: ['/data/media', '/srv/clips'] }, { media_dirs: null }]);
    await page.close();
  }, 60_000);

  it('the wizard sends the operator to Settings when a file is refused', async () => {
    const page = await openDesktop('/tasks');
    const wizard = await previewOutside(page);
    await wizard
      .getByRole('note')
      .getByText(/Add this file’s folder in Settings, under Media folders; it applies after a restart/)
      .waitFor(POLL);
    await page.close();
  }, 60_000);
});
