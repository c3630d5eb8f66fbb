import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackBody } from '../engine/events/schema';
import type { TaskCounts } from '../engine/tasks/schema';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { Receiver } from './helpers/receiver';
import { slidingBoxClip } from './helpers/synthetic-clip';

/**
 * Zone occupancy in GET /api/task/{task_id}/counts: a white 30x60 box enters a grey 640x360 scene
 * (10 fps) from the left at 1 s, once the motion detector has learned the empty scene, and slides
 * right at 60 px/s, seen by the built-in motion app with a zone on each half of the frame. Its foot
 * point is in "west" until 6.1 s and in "east" after.
 */

type Message = Extract<CallbackBody, { event: 'message' }>;

let t: TestEngine;
let receiver: Receiver;
let dir: string;
let clip: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-zone-counts-'));
  clip = join(dir, 'slide.mp4');
  slidingBoxClip(clip, '60*t-60');
  t = await startTestEngine();
  receiver = await Receiver.start();
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const half = (x: number) => [
  [x, 0],
  [x + 320, 0],
  [x + 320, 360],
  [x, 360],
];

describe('zone occupancy in the running counts', () => {
  it('answers the objects in each zone now, per class entry, and null for an app without zones', async () => {
    const rule = { interval: 0 };
    expect((await t.call('PUT', '/api/zapk/builtin/app/motion', { json: { rule } })).body.code).toBe(0);
    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'builtin',
        app_ids: ['motion', 'intrusion'],
        video_url: clip,
        report_url: receiver.url,
        app_configs: [
          {
            app_id: 'motion',
            polygon: [],
            zones: [
              { name: 'west', polygon: half(0) },
              { name: 'east', polygon: half(320) },
            ],
          },
        ],
      },
    });
    expect(started.body.code).toBe(0);
    const taskId = (started.body.data as { task_id: string }).task_id;
    const path = `/api/task/${taskId}/counts`;
    const seenIn = (zone: string) =>
      receiver.accepted
        .map((r) => r.body as CallbackBody)
        .some(
          (b) =>
            b.event === 'message' &&
            b.task_id === taskId &&
            (b as Message).data.rules.some((r) => r.objects.some((o) => o.zones?.join() === zone)),
        );
    /** The next answer that counts an object in some zone (the motion detector may miss a frame). */
    const occupied = async () => {
      for (let tries = 0; tries < 30; tries++) {
        const data = (await t.call('GET', path)).body.data as TaskCounts;
        const zones = data.apps[0]?.zones;
        if (zones && Object.values(zones).some((z) => z.count > 0)) return data;
        await new Promise((done) => setTimeout(done, 100));
      }
      throw new Error('no object in a zone for 3 s');
    };
    const answer = (west: number, east: number) => ({
      task_id: taskId,
      apps: [
        {
          app_id: 'motion',
          line: null,
          zones: {
            west: { count: west, classes: { '0': west } },
            east: { count: east, classes: { '0': east } },
          },
        },
        { app_id: 'intrusion', line: null, zones: null },
      ],
    });

    await receiver.waitFor('the box in the west zone', () => seenIn('west'), 30_000);
    expect(await occupied()).toEqual(answer(1, 0));
    await receiver.waitFor('the box in the east zone', () => seenIn('east'), 30_000);
    // Past the border by a second: 60 px beyond it.
    await new Promise((done) => setTimeout(done, 1_000));
    expect(await occupied()).toEqual(answer(0, 1));
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 120_000);
});
