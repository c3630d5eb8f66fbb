import { createServer, type Server, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskSummary } from '../engine/tasks/schema';
import { type Language, type MessageKey, translate } from '../renderer/src/i18n';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';

/*
 * The start wizard's waits on a source, in Chromium against an engine in its own process: a camera
 * that accepts the connection and never answers (a real TCP server that stays silent) keeps the
 * engine waiting up to its 15 s limit. The wizard shows what it tries and the seconds so far, and
 * "Stop waiting" ends the wait at once: the request is aborted, and the engine drops the probe (its
 * ffmpegs hang up on the camera long before the 15 s), for a preview and for a start alike.
 * Screenshots go to test-output/console/wait-*.png.
 */

const ROOT = resolve(import.meta.dirname, '..');
const SHOTS = join(ROOT, 'test-output', 'console');
const POLL = { timeout: 30_000 };
/** The engine gives a source this long to answer (TASK_LIMITS.pullTimeoutMs, the preview's open timeout). */
const ENGINE_WAIT_MS = 15_000;

/** A camera that takes connections and never says a word; it records when each one opened and closed. */
class SilentCamera {
  readonly connections: Array<{ openedAt: number; closedAt: number | null }> = [];
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server) {}

  static async start(): Promise<SilentCamera> {
    const server = createServer();
    const camera = new SilentCamera(server);
    server.on('connection', (socket) => {
      const connection = { openedAt: Date.now(), closedAt: null as number | null };
      camera.connections.push(connection);
      camera.sockets.add(socket);
      socket.on('error', () => undefined);
      // Read (and ignore) what the engine sends: a socket left paused never hears its peer hang up.
      socket.resume();
      socket.on('close', () => {
        connection.closedAt = Date.now();
        camera.sockets.delete(socket);
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return camera;
  }

  get url(): string {
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    return `rtsp://127.0.0.1:${address.port}/stream1`;
  }

  open(): number {
    return this.connections.filter((connection) => connection.closedAt === null).length;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }
}

let c: ConsoleEngine;
let camera: SilentCamera;

beforeAll(async () => {
  c = await startConsoleEngine('console-wait');
  camera = await SilentCamera.start();
}, 120_000);

afterAll(async () => {
  await camera?.stop();
  await c?.stop();
});

async function wizard(language: Language): Promise<{ page: Page; t: (key: MessageKey) => string }> {
  const t = (key: MessageKey) => translate(language, key);
  const page = await c.open('/tasks', { language });
  await page.getByRole('button', { name: t('tasks.new') }).click();
  await page.getByRole('textbox', { name: t('wizard.videoUrl') }).fill(camera.url);
  return { page, t };
}

/**
 * Stops the wait shown, once the engine has reached the camera, and checks that the engine hung up
 * on it well before its own limit: the probe was dropped, not left to time out.
 */
async function stopWaiting(page: Page, t: (key: MessageKey) => string, shot: string): Promise<void> {
  await expect.poll(() => camera.open(), POLL).toBeGreaterThan(0);
  const reached = camera.connections.length;
  // The seconds so far are shown while it waits.
  await page
    .locator('.wait-progress .meta')
    .filter({ hasText: /^[1-9]\d* (s|秒)$/ })
    .waitFor(POLL);
  await page.screenshot({ path: join(SHOTS, `${shot}.png`) });
  const stoppedAt = Date.now();
  await page.getByRole('button', { name: t('wait.stop') }).click();
  await page.locator('.wait-progress').waitFor({ state: 'detached', ...POLL });
  await expect.poll(() => camera.open(), POLL).toBe(0);
  const closed = camera.connections.slice(0, reached).map((connection) => connection.closedAt ?? 0);
  const openedAt = Math.min(...camera.connections.slice(0, reached).map((connection) => connection.openedAt));
  // Hung up because the wait was stopped: long before the engine's own limit would have ended it.
  expect(Math.max(...closed) - openedAt).toBeLessThan(ENGINE_WAIT_MS - 3_000);
  expect(Math.max(...closed)).toBeGreaterThanOrEqual(stoppedAt);
}

describe('the wizard waits on a source that never answers', () => {
  it('shows what the preview tries and for how long, and stops it at once', async () => {
    const { page, t } = await wizard('en');
    await page.getByRole('button', { name: t('wizard.preview'), exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Opening ${camera.url}: waiting for its first frame…` })
      .waitFor(POLL);
    await stopWaiting(page, t, 'wait-preview-en');
    // Stopped, not refused: no error, and the source can be tried again.
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('button', { name: t('wizard.preview'), exact: true }).isEnabled()).toBe(true);
    await page.close();
  }, 120_000);

  it('shows the start waiting in Chinese and stops it: nothing of the task runs or is listed', async () => {
    const { page, t } = await wizard('zh-CN');
    await page.getByRole('button', { name: t('wizard.next') }).click();
    await page.getByRole('combobox', { name: t('wizard.package') }).selectOption('builtin');
    await page.getByRole('checkbox').first().check();
    await page.getByRole('button', { name: t('wizard.next') }).click();
    await page.getByRole('button', { name: t('wizard.next') }).click();
    await page.getByRole('button', { name: t('wizard.start') }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `正在 ${camera.url} 上启动任务：等待第一帧…` })
      .waitFor(POLL);
    await stopWaiting(page, t, 'wait-start-zh-CN');
    // The wizard is still open on its last step, to start again or change the source.
    await page.getByRole('button', { name: t('wizard.start') }).waitFor(POLL);
    const tasks = await c.api<TaskSummary[]>('GET', '/api/tasks');
    expect(tasks.filter((task) => task.video_url === camera.url)).toEqual([]);
    await page.close();
  }, 120_000);
});
