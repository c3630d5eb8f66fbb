import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock';
import type { AlarmPage, ReviewItem, ReviewItemDetail, ReviewItemPage, TaskView } from '../engine/contract';
import { CallbackBody } from '../engine/events/schema';
import { compileCheck } from '../engine/schema/ajv';
import { startTestEngine, type TestEngine, taskView } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { installExamplePackage } from './helpers/example-package';
import { Receiver } from './helpers/receiver';
import { WALKER, walkerClip } from './helpers/walker-clip';

/**
 * Review items on a clip with visits counted by hand (issue 35), with real parts: a clip made here
 * with ffmpeg, a person cut from the fixture video walking on grey; the engine runs the example
 * package's person app on it with onnxruntime (3 analyses a second), its rule firing every 1 s on this
 * camera (a per-camera override), and the callbacks go to a real receiver.
 *
 * The clip, by hand (the person 112 px wide, walking at 100 px/s, which the tracker follows at 3
 * analyses a second):
 *   visit 1, 0.5-9.3 s: walks in from the left and out on the right;
 *   visit 2, 11.5-21.5 s: stands still in the middle for 10 s (re-firing every second);
 *   visit 3, 24.0-32.8 s: walks across again;
 *   visit 4, 55.0-63.8 s: walks across again, after the test has ignored the person class on this camera;
 *   nothing else until the clip ends at 90 s (then it loops: the test is over by then).
 * Three visits before the ignore: three items, each of several alarms; none after it.
 */

const SPEED = 100;
const SPRITE = WALKER.sprite;
const OFF = -400;
const LENGTH_S = 90;
/** Visits before the ignore, by hand (above). */
const VISITS = 3;
/** When the third visit has left the frame, and when the fourth has, in clip time. */
const THIRD_GONE_S = 32.8;
const FOURTH_GONE_S = 63.8;
/** How far the analysis may trail the clip's play (opening the stream, a loaded machine). */
const LAG_S = 5;

/** The person's left edge over the clip time t (ffmpeg expression). */
function path(): string {
  const cross = (from: number) => `${-SPRITE.width}+${SPEED}*(t-${from})`;
  // [until, x] pieces, in order.
  const pieces: Array<[number, string]> = [
    [0.5, String(OFF)],
    [9.3, cross(0.5)],
    [11.5, String(OFF)],
    [21.5, '323'],
    [24.0, String(OFF)],
    [THIRD_GONE_S, cross(24.0)],
    [55.0, String(OFF)],
    [FOURTH_GONE_S, cross(55.0)],
  ];
  return pieces.reduceRight((rest, [until, x]) => `if(lt(t,${until}),${x},${rest})`, String(OFF));
}

async function makeClip(): Promise<string> {
  return walkerClip(mkdtempSync(join(tmpdir(), 'vc-visits-')), path(), LENGTH_S);
}

const checkCallback = compileCheck<CallbackBody>(CallbackBody, 'callback');
let t: TestEngine;
let receiver: Receiver;
let taskId: string;
/** Wall time the clip started playing (the start answers once its first frame is decoded). */
let clipStart: number;

const items = async () =>
  ((await t.call('GET', `/api/review/items?task_id=${taskId}`)).body.data as ReviewItemPage).items;
const alarms = async () =>
  ((await t.call('GET', `/api/alarms?task_id=${taskId}&limit=200`)).body.data as AlarmPage).items;
const clipTime = () => (Date.now() - clipStart) / 1000;

beforeAll(async () => {
  const clip = await makeClip();
  receiver = await Receiver.start();
  // Real time on the engine's clock: alarms are dated as they happen, so the 60 s gap is judged as live.
  t = await startTestEngine(undefined, undefined, { analysisFps: 3, clock: systemClock });
  expect(await installExamplePackage(t)).toBe(200);
  const started = await t.call('POST', '/api/task', {
    json: {
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person'],
      video_url: clip,
      report_url: receiver.url,
      rule_overrides: { person: { interval: 1 } },
    },
  });
  expect(started.body.code, JSON.stringify(started.body)).toBe(0);
  clipStart = Date.now();
  taskId = (started.body.data as { task_id: string }).task_id;
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

describe('a clip with visits counted by hand', () => {
  let before: ReviewItem[];

  it('gives one item per visit, the standing person one item of many alarms', async () => {
    await eventually('the clip past its third visit', () => clipTime() > THIRD_GONE_S + LAG_S, 60_000, 500);
    before = await eventually(
      'three visits of alarms, the last one settled',
      async () => {
        const listed = await items();
        const newest = listed[0];
        return listed.length >= VISITS && newest && Date.now() - newest.end > 3000 && listed;
      },
      30_000,
      500,
    );
    const counts = before.map((item) => item.alarm_count);
    // Items = visits within 10% (of 3: exactly), and alarms many more than items.
    expect(before).toHaveLength(VISITS);
    expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2 * VISITS);
    // Newest first: the standing visit is the middle one, firing about every second for 10 s.
    expect(counts[1]).toBeGreaterThanOrEqual(6);
    for (const item of before) {
      expect(item).toMatchObject({ task_id: taskId, apps: ['person'], rules: ['person:0'], classes: ['0'] });
      expect(item.track_id).toEqual(expect.any(String));
    }
    expect(new Set(before.map((item) => item.track_id)).size).toBe(VISITS);
    const stood = before[1] as ReviewItem;
    expect(stood.end - stood.start).toBeGreaterThan(5000);
  }, 120_000);

  it('leaves the callbacks as they were: one per alarm, each a contract body', async () => {
    const stored = await alarms();
    await receiver.waitFor('a callback per stored alarm', () => receiver.accepted.length >= stored.length);
    expect(receiver.accepted.map((r) => r.event_id).sort()).toEqual(stored.map((a) => a.event_id).sort());
    for (const request of receiver.accepted) {
      expect(checkCallback(request.body).ok).toBe(true);
      expect(Object.keys(request.body ?? {}).sort()).toEqual(
        ['app_id', 'business_id', 'data', 'event', 'event_id', 'seq', 'task_id', 'timestamp'].sort(),
      );
    }
    const grouped = await Promise.all(
      before.map(async (item) => {
        const detail = (await t.call('GET', `/api/review/items/${item.item_id}`)).body
          .data as ReviewItemDetail;
        return detail.alarms.map((alarm) => alarm.event_id);
      }),
    );
    // Every alarm so far is in exactly one item.
    expect(grouped.flat().sort()).toEqual(stored.map((a) => a.event_id).sort());
  });

  it('ignoring the class from an item: the next visit on this camera fires no alarm', async () => {
    const item = before[0] as ReviewItem;
    const answer = await t.call('POST', `/api/review/items/${item.item_id}/ignore`, {
      json: { kind: 'class', apply: true },
    });
    expect(answer.body.code, answer.body.msg).toBe(0);
    const view: TaskView = await taskView(t, taskId);
    expect(view.rule_overrides).toEqual({
      person: { interval: 1, classes: [{ class_id: '0', threshold: 1, min_pixel: 1_000_000 }] },
    });
    const firedBefore = (await alarms()).length;
    const analysedBefore = view.health?.frames_analysed ?? 0;
    expect(clipTime()).toBeLessThan(55);
    await eventually('the clip past its fourth visit', () => clipTime() > FOURTH_GONE_S + LAG_S, 60_000, 500);
    const after = await taskView(t, taskId);
    // The fourth visit was analysed (3 a second over its 8.8 s and more) and fired nothing.
    expect((after.health?.frames_analysed ?? 0) - analysedBefore).toBeGreaterThan(27);
    expect((await alarms()).length).toBe(firedBefore);
    expect(await items()).toHaveLength(VISITS);
  }, 120_000);
});
