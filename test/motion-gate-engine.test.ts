import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock';
import type { AlarmPage, GateHealth, TaskView } from '../engine/contract';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { installExamplePackage } from './helpers/example-package';
import { WALKER, walkerClip } from './helpers/walker-clip';

/**
 * The motion gate through a real engine (issue 36): clips made here with ffmpeg, the example
 * package's yolox_nano in onnxruntime, each clip analysed by two tasks side by side, one with
 * motion_gate (the default) and one without.
 *
 * Still clip (768x576, WALKER's person): nothing for 26 s, then the person walks across at 100 px/s
 * (gone at 34.8 s), then nothing again. The gated task rests (health.gate: resting, frames skipped)
 * before the walk, detects on regions during it, and counts the one crossing of a vertical line as
 * the ungated task does.
 *
 * Standing clip (768x576, WALKER's person): the person walks in from 1 s and stands at x 300 from
 * STANDING_STILL_S to the end, as a parked car or a left bag would. The default gate (no crops)
 * rests beside it: no frame is skipped while the track is seen, the resting frames carry it without
 * the detector, and the person app reports it as often as the ungated task.
 *
 * Distant clip (1280x720): a person 34x76 px walks in at 40 px/s from 4 s. The whole frame shrunk to the
 * model's 416 px makes it 11x25 px, which yolox_nano does not find; a crop at the frame's own scale
 * does (measured: score 0.84 at 34x76 in a crop, nothing in the whole frame up to 50x110).
 */

const FPS = 4;
const STILL = { enter: 26, speed: 100, length: 60 };
const STILL_GONE_S = STILL.enter + (WALKER.width + WALKER.sprite.width) / STILL.speed;
const STANDING = { enter: 1, stopX: 300, speed: 100, length: 45 };
const STANDING_STILL_S = STANDING.enter + (STANDING.stopX + WALKER.sprite.width) / STANDING.speed;
const DISTANT = {
  width: 1280,
  height: 720,
  fps: 25,
  top: 300,
  sprite: { width: 34, height: 76 },
  enter: 4,
  // A walk (1.7 m tall at 76 px: 45 px/m), slow enough for the tracker to follow a 34 px box at 4 fps.
  speed: 40,
  length: 60,
} as const;
/** Long enough for the person's track to be confirmed and its app to fire. */
const DISTANT_WALK_S = 12;
/** How far the analysis may trail the clip's play (opening the stream, a loaded machine). */
const LAG_S = 5;
const LINE = [
  [384, 0],
  [384, 576],
];

let t: TestEngine;
let clipStart: number;
const clipTime = () => (Date.now() - clipStart) / 1000;
const tasks = {
  stillOn: '',
  stillOff: '',
  standingOn: '',
  standingOff: '',
  distantOn: '',
  distantOff: '',
};

const gateOf = async (taskId: string): Promise<GateHealth> =>
  ((await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView).health.gate;
const lineOf = async (taskId: string) => {
  const counts = (await t.call('GET', `/api/task/${taskId}/counts`)).body.data as {
    apps: Array<{ app_id: string; line: { in: number; out: number } | null }>;
  };
  return counts.apps.find((app) => app.app_id === 'loiter')?.line;
};
const alarmsOf = async (taskId: string) =>
  ((await t.call('GET', `/api/alarms?task_id=${taskId}&limit=200`)).body.data as AlarmPage).items;

async function start(body: Record<string, unknown>): Promise<string> {
  const started = await t.call('POST', '/api/task', { json: body });
  expect(started.body.code, JSON.stringify(started.body)).toBe(0);
  return (started.body.data as { task_id: string }).task_id;
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vc-gate-'));
  const off = -400;
  const still = await walkerClip(
    mkdtempSync(join(dir, 'still-')),
    `if(lt(t,${STILL.enter}),${off},if(lt(t,${STILL_GONE_S}),${-WALKER.sprite.width}+${STILL.speed}*(t-${STILL.enter}),${off}))`,
    STILL.length,
  );
  const standing = await walkerClip(
    mkdtempSync(join(dir, 'standing-')),
    `if(lt(t,${STANDING.enter}),${off},min(${-WALKER.sprite.width}+${STANDING.speed}*(t-${STANDING.enter}),${STANDING.stopX}))`,
    STANDING.length,
  );
  const distant = await walkerClip(
    mkdtempSync(join(dir, 'distant-')),
    `if(lt(t,${DISTANT.enter}),${off},${-DISTANT.sprite.width}+${DISTANT.speed}*(t-${DISTANT.enter}))`,
    DISTANT.length,
    undefined,
    DISTANT,
  );
  t = await startTestEngine(undefined, undefined, { analysisFps: FPS, clock: systemClock });
  expect(await installExamplePackage(t)).toBe(200);
  const stillTask = {
    zapk_id: 'coco-yolox-nano',
    app_ids: ['loiter'],
    video_url: still,
    app_configs: [{ app_id: 'loiter', polygon: LINE, line_direction: 'both' }],
  };
  const distantTask = { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: distant };
  const standingTask = { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: standing };
  // All six start before the clips' clock is read: each plays from its own start, within a second or two.
  // The gated tasks detect on crops (gate_regions): the default gate detects moving frames whole,
  // which motion-gate-accuracy.test.ts compares with the gate off.
  tasks.stillOn = await start({ ...stillTask, gate_regions: true });
  tasks.stillOff = await start({ ...stillTask, motion_gate: false });
  tasks.standingOn = await start(standingTask);
  tasks.standingOff = await start({ ...standingTask, motion_gate: false });
  tasks.distantOn = await start({ ...distantTask, gate_regions: true });
  tasks.distantOff = await start({ ...distantTask, motion_gate: false });
  clipStart = Date.now();
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('the motion gate on a still clip', () => {
  it('shows motion_gate and gate_regions on the task as asked', async () => {
    const view = async (taskId: string) => (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
    const gate = async (taskId: string) => {
      const { motion_gate, gate_regions } = await view(taskId);
      return { motion_gate, gate_regions };
    };
    expect(await gate(tasks.stillOn)).toEqual({ motion_gate: true, gate_regions: true });
    expect(await gate(tasks.stillOff)).toEqual({ motion_gate: false, gate_regions: false });
  });

  it('rests before anything moves: frames skipped whole, the detector run only at the refresh', async () => {
    // Resting for 5 s, the window of its rates: only the refresh every 2 s goes to the detector.
    const resting = await eventually(
      'the gated task resting',
      async () => {
        const gate = await gateOf(tasks.stillOn);
        return gate.resting && gate.rate_fps <= 1 && gate;
      },
      (STILL.enter - 1) * 1000,
      250,
    );
    expect(clipTime()).toBeLessThan(STILL.enter);
    expect(resting).toMatchObject({ enabled: true, resting: true, frames_regions: expect.any(Number) });
    // Every skipped frame is counted as analysed (the motion stage looked at it).
    const view = (await t.call('GET', `/api/task/${tasks.stillOn}`)).body.data as TaskView;
    expect(view.health.frames_analysed).toBeGreaterThanOrEqual(resting.frames_skipped + resting.frames_full);
    expect(resting.frames_skipped).toBeGreaterThan(0);
    expect(resting.detector_runs_per_s).toBeLessThanOrEqual(1);
    const ungated = await gateOf(tasks.stillOff);
    expect(ungated).toMatchObject({ enabled: false, resting: false, frames_skipped: 0, frames_regions: 0 });
    expect(ungated.frames_full).toBeGreaterThan(0);
    console.log('still clip, resting:', JSON.stringify({ on: resting, off: ungated }));
  }, 60_000);

  it('detects the walk on regions and counts the same crossing as the ungated task', async () => {
    await eventually('the walk over', () => clipTime() > STILL_GONE_S + LAG_S, 60_000, 500);
    const on = await lineOf(tasks.stillOn);
    const off = await lineOf(tasks.stillOff);
    expect(off).toBeDefined();
    expect((off?.in ?? 0) + (off?.out ?? 0)).toBe(1);
    expect(on).toEqual(off);
    const gate = await gateOf(tasks.stillOn);
    expect(gate.frames_regions).toBeGreaterThan(0);
    expect(gate.frames_full).toBeGreaterThan(0);
    const alarms = async (taskId: string) => (await alarmsOf(taskId)).map((alarm) => alarm.app_id);
    const ungatedAlarms = await alarms(tasks.stillOff);
    expect(ungatedAlarms.length).toBeGreaterThan(0);
    expect(await alarms(tasks.stillOn)).toEqual(ungatedAlarms);
    const ungated = await gateOf(tasks.stillOff);
    console.log('still clip, after the walk:', JSON.stringify({ on: gate, off: ungated }));
  }, 90_000);
});

describe('the motion gate beside a person standing still', () => {
  it('rests: skips no frame while the track is seen, carries it without the detector, and reports it as the ungated task does', async () => {
    await eventually(
      'the person standing for 20 s',
      () => clipTime() > STANDING_STILL_S + 20 + LAG_S,
      90_000,
      500,
    );
    const gate = await gateOf(tasks.standingOn);
    const ungated = await gateOf(tasks.standingOff);
    console.log('standing clip:', JSON.stringify({ on: gate, off: ungated }));
    expect(gate).toMatchObject({ enabled: true, resting: true, frames_skipped: 0 });
    expect(gate.frames_regions).toBeGreaterThan(0);
    // The last 5 s: the refresh every 2 s only, where the ungated task ran the detector on every frame.
    expect(gate.detector_runs_per_s).toBeLessThanOrEqual(1);
    expect(ungated.detector_runs_per_s).toBeGreaterThan(FPS / 2);
    // The person app reports every person every 5 s: the carried track keeps it doing so.
    const [on, off] = [await alarmsOf(tasks.standingOn), await alarmsOf(tasks.standingOff)];
    expect(off.length).toBeGreaterThanOrEqual(4);
    expect(Math.abs(on.length - off.length)).toBeLessThanOrEqual(1);
  }, 120_000);
});

describe('motion_gate updated on a running task', () => {
  it('turns the gate on from the next frame: its motion model warms up on whole frames, then rests', async () => {
    const before = await gateOf(tasks.stillOff);
    const updated = await t.call('PUT', `/api/task/${tasks.stillOff}`, { json: { motion_gate: true } });
    expect(updated.body.code, JSON.stringify(updated.body)).toBe(0);
    expect((updated.body.data as TaskView).motion_gate).toBe(true);
    const after = await eventually(
      'the gate running',
      async () => {
        const gate = await gateOf(tasks.stillOff);
        return gate.enabled && gate.frames_skipped > 0 && gate;
      },
      30_000,
      250,
    );
    expect(after.frames_full).toBeGreaterThan(before.frames_full);
  }, 60_000);
});

describe('the motion gate on a small, distant person', () => {
  it('finds the person on crops at the frame’s own scale, which the shrunk whole frame misses', async () => {
    await eventually(
      'the distant walk',
      () => clipTime() > DISTANT.enter + DISTANT_WALK_S + LAG_S,
      90_000,
      500,
    );
    const gated = await alarmsOf(tasks.distantOn);
    const ungated = await alarmsOf(tasks.distantOff);
    expect(gated.length).toBeGreaterThan(0);
    expect(gated.every((alarm) => alarm.app_id === 'person')).toBe(true);
    expect(ungated).toEqual([]);
    console.log(
      'distant clip:',
      JSON.stringify({ on: await gateOf(tasks.distantOn), off: await gateOf(tasks.distantOff) }),
    );
  }, 120_000);
});
