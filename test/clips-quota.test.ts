import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIP_SETTINGS_DEFAULTS,
  type Clip,
  type ClipPage,
  type ClipUsage,
} from '../engine/clips/clip-schema';
import type { CallbackBody } from '../engine/events/schema';
import { openDb } from '../engine/store/db';
import { SettingsRepository } from '../engine/store/settings-repository';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { Receiver } from './helpers/receiver';
import { slidingBoxClip } from './helpers/synthetic-clip';

/**
 * The clips' quota and retention on a real engine: the built-in motion app watches a 16 s scene
 * (looping) where a white box crosses the frame from 6 s on, firing on every frame; clips run from
 * 10 s before to 1 s after (never extended), so a new clip starts every second or two while the box
 * is in view, the first with less buffered than its pre-roll. The quota is far below the 64 MiB an
 * operator may set: it is stored in the settings table before the engine starts (the PUT refuses
 * it), so that a few clips of 10 to 20 KB pass it.
 */

type Message = Extract<CallbackBody, { event: 'message' }>;

const QUOTA = 60_000;
let t: TestEngine;
let receiver: Receiver;
let dir: string;
let taskId: string;

const clips = async () =>
  ((await t.call('GET', `/api/clips?task_id=${taskId}&limit=200`)).body.data as ClipPage).items;
const usage = async () => ((await t.call('GET', '/api/system')).body.data as { clips: ClipUsage }).clips;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-clips-quota-'));
  const source = join(dir, 'cross.mp4');
  slidingBoxClip(source, '60*t-360', 16);
  const dataDir = join(dir, 'data');
  const db = openDb(dataDir);
  new SettingsRepository(db).set('clips', {
    ...CLIP_SETTINGS_DEFAULTS,
    pre_s: 10,
    post_s: 1,
    max_post_s: 1,
    quota_bytes: QUOTA,
  });
  db.close();
  t = await startTestEngine(dataDir);
  receiver = await Receiver.start();
  expect(
    (await t.call('PUT', '/api/zapk/builtin/app/motion', { json: { rule: { interval: 0 } } })).body.code,
  ).toBe(0);
  const started = await t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: source, report_url: receiver.url },
  });
  expect(started.body.code).toBe(0);
  taskId = (started.body.data as { task_id: string }).task_id;
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('clips under a quota and a retention time', () => {
  it("a task's first alarm gets what the buffer holds, and says its pre-roll is short", async () => {
    const first = await eventually(
      'the first clip cut',
      async () => {
        const oldest = (await clips()).at(-1);
        return oldest && oldest.state !== 'pending' && oldest;
      },
      60_000,
    );
    expect(first).toMatchObject({ state: 'ready', preroll_short: true });
  }, 90_000);

  it('removes the oldest ready clips first to stay under the quota; every event is kept and delivered', async () => {
    const removed = await eventually(
      'clips removed for the quota, and later ones ready',
      async () => {
        const all = await clips();
        const gone = all.filter((c) => c.reason === 'quota');
        return gone.length >= 2 && all.filter((c) => c.state === 'ready').length >= 1 && all;
      },
      150_000,
      1000,
    );
    const ready = removed.filter((c) => c.state === 'ready');
    const byQuota = removed.filter((c) => c.reason === 'quota');
    // Oldest first: every clip the quota took is older than every clip still ready.
    const order = (c: Clip) => removed.indexOf(c); // newest first
    expect(Math.min(...byQuota.map(order))).toBeGreaterThan(Math.max(...ready.map(order)));
    for (const c of byQuota) {
      expect(c).toMatchObject({ state: 'none', bytes: 0, url: null });
      expect(existsSync(join(t.dataDir, 'clips', taskId, `${c.clip_id}.mp4`))).toBe(false);
    }
    const now = await usage();
    expect(now.bytes).toBeLessThanOrEqual(QUOTA);
    expect(ready.reduce((sum, c) => sum + c.bytes, 0)).toBeLessThanOrEqual(QUOTA);
    expect(now.dropped.quota).toBeGreaterThanOrEqual(byQuota.length);
    // Every alarm whose clip went is still stored, and was delivered.
    const delivered = new Set(
      receiver.accepted
        .map((r) => r.body as CallbackBody)
        .filter((b): b is Message => b.event === 'message')
        .map((b) => b.event_id),
    );
    for (const c of byQuota) expect(delivered.has(c.event_id as string)).toBe(true);
    const events: { seq: number; event_id: string }[] = [];
    for (let after = 0; after !== null; ) {
      const page = (await t.call('GET', `/api/task/${taskId}/events?limit=500&after_seq=${after}`)).body
        .data as { items: { seq: number; event_id: string }[]; next_after_seq: number | null };
      events.push(...page.items);
      after = page.next_after_seq as number;
    }
    const stored = new Set(events.map((e) => e.event_id));
    for (const c of byQuota) expect(stored.has(c.event_id as string)).toBe(true);
    // Gap-free: nothing was lost.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  }, 180_000);

  it('removes the ready clips older than retention_days at its hourly sweep', async () => {
    expect((await t.call('DELETE', `/api/task/${taskId}`)).body.code).toBe(0);
    // Once the clips its last alarms asked for are cut, nothing changes them but the sweep.
    await eventually('no clip pending', async () => (await clips()).every((c) => c.state !== 'pending'));
    const before = (await clips()).filter((c) => c.state === 'ready');
    expect(before.length).toBeGreaterThan(0);
    t.advance(CLIP_SETTINGS_DEFAULTS.retention_days * 24 * 3600_000 + 3600_000);
    const after = await clips();
    for (const c of before) {
      expect(after.find((a) => a.clip_id === c.clip_id)).toMatchObject({ state: 'none', reason: 'expired' });
      expect(existsSync(join(t.dataDir, 'clips', taskId, `${c.clip_id}.mp4`))).toBe(false);
    }
    // GET /api/system answers from a 2 s cache.
    await eventually(
      'the retention counted',
      async () => (await usage()).dropped.retention === before.length,
    );
  });
});
