import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Clip, ClipUsage } from '../engine/clips/clip-schema';
import type { CallbackBody } from '../engine/events/schema';
import { ADMIN_PASSWORD } from './helpers/engine';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { eventually } from './helpers/eventually';
import { Receiver, range } from './helpers/receiver';
import { SmallDisk } from './helpers/small-disk';
import { slidingBoxClip } from './helpers/synthetic-clip';

/**
 * A full data disk while an alarm's clip waits for its cut: the clip is lost (none, disk_full,
 * counted in GET /api/system), its event and every later one are kept and delivered once there is
 * space again. The disk is a tmpfs of its own filled to ENOSPC (SmallDisk): files and database
 * alike fail as on a full disk. Where no tmpfs can be mounted (not root), SQLite's page limit
 * stands in for the database only and clip files would still be written: the test needs the
 * tmpfs and says so.
 */

type Message = Extract<CallbackBody, { event: 'message' }>;

const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const disk = SmallDisk.create(64);
cleanup.push(() => disk.dispose());

describe('a full disk during a clip', () => {
  it.skipIf(disk.mode !== 'tmpfs')(
    'loses the clip, not the event',
    async () => {
      const work = mkdtempSync(join(tmpdir(), 'vc-clips-full-'));
      cleanup.push(() => rmSync(work, { recursive: true, force: true }));
      const source = join(work, 'slide.mp4');
      slidingBoxClip(source, '60*t-360', 16);
      const rx = await Receiver.start();
      cleanup.push(() => rx.close());
      const engine: EngineProcess = await spawnEngine(disk.dataDir, ADMIN_PASSWORD, [], disk.nodeArgs);
      cleanup.push(() => stopEngine(engine));
      const token = await signIn(engine.url, ADMIN_PASSWORD);
      const call = <T>(method: string, path: string, body?: unknown) =>
        callApi<T>(engine.url, token, method, path, body);
      await call('PUT', '/api/settings/clips', { pre_s: 2, post_s: 4, max_post_s: 4 });
      await call('PUT', '/api/zapk/builtin/app/motion', { rule: { interval: 0 } });
      const task = await call<{ task_id: string }>('POST', '/api/task', {
        zapk_id: 'builtin',
        app_ids: ['motion'],
        video_url: source,
        report_url: rx.url,
      });
      const messages = () =>
        rx.accepted.map((r) => r.body as CallbackBody).filter((b): b is Message => b.event === 'message');
      await rx.waitFor('the first alarm', () => messages().length > 0, 90_000);
      const first = messages()[0] as Message;
      expect(first.data.clip?.state).toBe('pending');
      // Full before its cut (4 s after the alarm).
      disk.fill();
      const clipId = first.data.clip?.clip_id as string;
      // The cut fails for want of space; its state is stored once there is room again.
      await eventually(
        'the cut failed',
        async () => (await call<{ clips: ClipUsage }>('GET', '/api/system')).clips.dropped.disk_full >= 1,
        60_000,
        500,
      );
      disk.free();
      const lost = await eventually(
        'the lost clip recorded',
        async () => {
          const clip = await call<Clip>('GET', `/api/clips/${clipId}/info`);
          return clip.state !== 'pending' && clip;
        },
        60_000,
      );
      expect(lost).toMatchObject({ state: 'none', reason: 'disk_full', bytes: 0, url: null });
      const usage = (await call<{ clips: ClipUsage }>('GET', '/api/system')).clips;
      expect(usage.last_error).toMatch(/disk_full/);
      expect(usage.last_error_at).toEqual(expect.any(Number));
      // Every event was stored in order, without a gap, and delivered: the alarm's first of all.
      await call('DELETE', `/api/task/${task.task_id}`);
      const stored = await eventually(
        'every event delivered',
        async () => {
          const page = await call<{ items: { seq: number; event_id: string; state: string }[] }>(
            'GET',
            `/api/task/${task.task_id}/events?limit=500`,
          );
          return page.items.every((e) => e.state === 'delivered') && page.items;
        },
        60_000,
      );
      expect(stored.map((e) => e.seq)).toEqual(range(1, stored.length));
      expect(stored.map((e) => e.event_id)).toContain(first.event_id);
      const received = new Set(rx.accepted.map((r) => r.event_id));
      expect(stored.filter((e) => !received.has(e.event_id))).toEqual([]);
    },
    240_000,
  );
});
