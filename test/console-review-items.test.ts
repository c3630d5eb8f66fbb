import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFfmpeg } from '../engine/media/ffmpeg';
import type {
  ClipSettings,
  ClipUsage,
  ReviewItemDetail,
  ReviewItemPage,
  Timeline,
} from '../renderer/src/api';
import { dayOf, windowOf } from '../renderer/src/review/timeline-day';
import { blockingViolations } from './helpers/axe';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { eventually } from './helpers/eventually';
import { VIDEO } from './helpers/fixtures';

/*
 * Alarm review on review items in Chromium against a real engine: a camera (the fixture's people
 * walking, as H.264 at 10 fps with a keyframe a second, played as a live source) watched by the
 * person app, each visit a review item with a clip cut from the camera's own stream. The console
 * lists the engine's items, plays an item's clip with its snapshot as poster and steps it a frame at
 * a time, marks a selection and "all shown" as the engine counts them, applies "ignore this object
 * here" only after its confirmation, saves the last seconds of the live view, and shows the clip
 * settings and usage on the System page.
 */

const POLL = { timeout: 60_000 };
const FPS = 10;
/** Short clips, so that they are ready soon after their alarm. */
const CLIPS = { pre_s: 2, post_s: 2, max_post_s: 2 };

let c: ConsoleEngine;
let taskId: string;
let file: string;
const api = <T>(method: string, path: string, body?: unknown) => c.api<T>(method, path, body);
const items = (query = '') => api<ReviewItemPage>('GET', `/api/review/items?task_id=${taskId}${query}`);
const overrides = async () => {
  const task = await api<{ rule_overrides?: unknown; app_configs?: unknown }>('GET', `/api/task/${taskId}`);
  return JSON.stringify([task.rule_overrides ?? null, task.app_configs ?? null]);
};

beforeAll(async () => {
  file = join(tmpdir(), `vc-review-items-${randomUUID()}.mp4`);
  execFileSync(findFfmpeg(), [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-i', VIDEO, '-t', '40', '-r', String(FPS)],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', String(FPS), file],
  ]);
  c = await startConsoleEngine('console-review-items');
  await c.installExample();
  await api('PUT', '/api/settings/clips', CLIPS);
  ({ task_id: taskId } = await api<{ task_id: string }>('POST', '/api/task', {
    zapk_id: 'coco-yolox-nano',
    app_ids: ['person'],
    video_url: file,
    name: 'Gate',
    analysis_fps: 2,
  }));
  await eventually(
    'two review items, one with its clip ready',
    async () => {
      const page = await items();
      return page.total >= 2 && page.items.some((item) => item.clip?.state === 'ready');
    },
    240_000,
    1_000,
  );
}, 360_000);

afterAll(async () => {
  await c?.stop();
  if (file) rmSync(file, { force: true });
});

/** The console at a path, with a fresh page (the review filter is kept per tab). */
const open = (path: string): Promise<Page> => c.open(path, { width: 1280, height: 900 });

describe('review items with clips in Chromium', () => {
  it('saves the last seconds of the live view as a clip that plays', async () => {
    const page = await open(`/live/${taskId}`);
    await page.getByRole('button', { name: 'Save clip (last 10 s)' }).click();
    const link = page.getByRole('link', { name: 'open the saved clip' });
    await link.waitFor(POLL);
    const href = (await link.getAttribute('href')) as string;
    expect(new URL(href).pathname).toMatch(/^\/api\/clips\/[^/]+$/);
    expect(await blockingViolations(page)).toEqual([]);
    const played = await page.evaluate(async (src) => {
      const video = document.createElement('video');
      video.muted = true;
      video.src = src;
      document.body.append(video);
      await video.play();
      await new Promise((done) => setTimeout(done, 1_500));
      return { time: video.currentTime, width: video.videoWidth };
    }, href);
    expect(played.time).toBeGreaterThan(0.3);
    expect(played.width).toBe(768);
    const saved = await api<{ total: number }>('GET', `/api/clips?task_id=${taskId}&saved=true`);
    expect(saved.total).toBe(1);
    await page.close();
  }, 120_000);

  it('applies "ignore this object here" only after its confirmation', async () => {
    const initial = await overrides();
    const page = await open('/alarms');
    await page.getByRole('button', { name: 'Ignore this object here…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Gate would stop reporting person for Person detection.').waitFor(POLL);
    // Shown, not applied.
    expect(await overrides()).toBe(initial);
    expect(await blockingViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Apply on Gate' }).click();
    await dialog.getByText(/^Applied\. To undo it/).waitFor(POLL);
    const applied = await overrides();
    expect(applied).not.toBe(initial);
    expect(applied).toContain('"0"');
    await page.close();
  }, 120_000);

  describe('once the camera no longer alarms', () => {
    beforeAll(async () => {
      // The ignored class ends the alarms; the clips of the last ones finish.
      let last = '';
      await eventually(
        'the items to settle with no clip pending',
        async () => {
          const page = await items('&limit=200');
          const now = JSON.stringify(page.items.map((item) => [item.item_id, item.clip?.state]));
          const settled = now === last && page.items.every((item) => item.clip?.state !== 'pending');
          last = now;
          return settled;
        },
        120_000,
        3_000,
      );
    }, 150_000);

    it("lists the engine's items, and its day's timeline opens one", async () => {
      const engine = await items('&reviewed=false&limit=200');
      const page = await open('/alarms');
      await page
        .getByRole('status')
        .filter({ hasText: `${engine.total} review items` })
        .waitFor(POLL);
      const rows = page.locator('.virtual-row');
      expect(Number(await rows.first().getAttribute('aria-setsize'))).toBe(engine.total);
      expect(await page.locator('.alarm-row strong').first().textContent()).toBe('Gate');
      const newest = engine.items[0] as ReviewItemPage['items'][number];
      const { since, until } = dayOf(newest.start);
      const timeline = await api<Timeline>(
        'GET',
        `/api/review/timeline?task_id=${taskId}&since=${since}&until=${until}`,
      );
      const marks = page.getByRole('list', { name: 'Review items of Gate' }).getByRole('button');
      await expect.poll(() => marks.count(), POLL).toBe(timeline.items.length);
      // Ten minutes around the newest item: its visits' marks apart, still the engine's.
      await page.getByLabel('Span').selectOption({ label: '10 minutes' });
      const near = windowOf(newest.start, 'tenMinutes');
      const close = await api<Timeline>(
        'GET',
        `/api/review/timeline?task_id=${taskId}&since=${near.since}&until=${near.until}`,
      );
      await expect.poll(() => marks.count(), POLL).toBe(close.items.length);
      const oldest = close.items[0] as Timeline['items'][number];
      await marks.first().focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => marks.first().getAttribute('aria-current'), POLL).toBe('true');
      const detail = await api<ReviewItemDetail>('GET', `/api/review/items/${oldest.item_id}`);
      await page
        .locator('.alarm-detail .meta')
        .filter({ hasText: `${detail.alarm_count} alarm` })
        .waitFor(POLL);
      await page.close();
    }, 120_000);

    it('plays an item’s clip with its snapshot as poster, and steps it one frame', async () => {
      const engine = await items('&reviewed=false&limit=200');
      const index = engine.items.findIndex((item) => item.clip?.state === 'ready');
      expect(index).toBeGreaterThanOrEqual(0);
      const item = engine.items[index] as ReviewItemPage['items'][number];
      const page = await open('/alarms');
      await page
        .getByRole('status')
        .filter({ hasText: `${engine.total} review items` })
        .waitFor(POLL);
      for (let i = 0; i < index; i++) await page.keyboard.press('j');
      const video = page.getByLabel('Clip of Gate');
      await video.waitFor(POLL);
      // The poster is linked once its link token came.
      await expect
        .poll(() => video.getAttribute('poster'), POLL)
        .toContain(`/api/alarms/${item.best_event_id}/snapshot`);
      await page.keyboard.press('Enter');
      await expect
        .poll(() => video.evaluate((element: HTMLVideoElement) => element.currentTime), POLL)
        .toBeGreaterThan(0.5);
      expect(await video.evaluate((element: HTMLVideoElement) => element.videoWidth)).toBe(768);
      await page.keyboard.press('Enter');
      const now = () => video.evaluate((element: HTMLVideoElement) => element.currentTime);
      await expect.poll(() => video.evaluate((element: HTMLVideoElement) => element.paused)).toBe(true);
      const before = await now();
      await page.getByRole('button', { name: 'Next frame' }).click();
      await expect.poll(async () => (await now()) - before, POLL).toBeCloseTo(1 / FPS, 3);
      await page.getByRole('button', { name: 'Previous frame' }).click();
      await expect.poll(now, POLL).toBeCloseTo(before, 3);
      // The first alarm's stored boxes, drawn at its moment of the clip.
      await page.getByRole('button', { name: 'Show in the clip' }).first().click();
      await page.getByText(/^Boxes of the alarm at .* drawn \(\d+ objects?\)\.$/).waitFor(POLL);
      // The item with its clip, its alarms and its camera's timeline, as axe reads them.
      expect(await blockingViolations(page)).toEqual([]);
      const download = page.getByRole('link', { name: 'Download clip' });
      expect(new URL((await download.getAttribute('href')) as string).searchParams.get('download')).toBe('1');
      await page.close();
    }, 120_000);

    it('marks a selection, then all shown, reviewed as the engine counts them', async () => {
      const engine = await items('&reviewed=false&limit=200');
      const first = engine.items[0] as ReviewItemPage['items'][number];
      const page = await open('/alarms');
      await page
        .getByRole('status')
        .filter({ hasText: `${engine.total} review items` })
        .waitFor(POLL);
      await page.getByRole('checkbox').first().check();
      await page.getByRole('button', { name: 'Mark selected reviewed (1)' }).click();
      await expect
        .poll(
          async () => (await api<ReviewItemDetail>('GET', `/api/review/items/${first.item_id}`)).reviewed_at,
          POLL,
        )
        .not.toBeNull();
      const left = (await items('&reviewed=false')).total;
      expect(left).toBe(engine.total - 1);
      // "All shown": the filter's items as the engine counts them now.
      await page.reload();
      await page
        .getByRole('status')
        .filter({ hasText: `${left} review items` })
        .waitFor(POLL);
      await page.getByRole('button', { name: `Mark all ${left} shown reviewed` }).click();
      await page
        .getByRole('dialog')
        .getByRole('button', { name: `Mark all ${left} shown reviewed` })
        .click();
      await page
        .getByRole('status')
        .filter({ hasText: `${left} ${left === 1 ? 'item' : 'items'} marked reviewed.` })
        .waitFor(POLL);
      expect((await items('&reviewed=false')).total).toBe(0);
      await page.close();
    }, 120_000);

    it('shows the clip settings and usage on the System page, and saves a change', async () => {
      const system = await api<{ clips: ClipUsage }>('GET', '/api/system');
      const page = await open('/system');
      expect(await page.getByLabel('Seconds before an alarm').inputValue()).toBe(String(CLIPS.pre_s));
      await page.getByText(new RegExp(`^${system.clips.count} clips?, `)).waitFor(POLL);
      expect(await blockingViolations(page)).toEqual([]);
      await page.getByLabel('Keep clips (days)').fill('30');
      await page.getByRole('button', { name: 'Save clip settings' }).click();
      await page.getByText('Clip settings saved.').waitFor(POLL);
      expect((await api<ClipSettings>('GET', '/api/settings/clips')).retention_days).toBe(30);
      await page.close();
    }, 120_000);
  });
});
