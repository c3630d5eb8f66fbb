import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskHealth } from '../engine/contract/health';
import type { CallbackBody } from '../engine/events/schema';
import { findFfmpeg } from '../engine/media/ffmpeg';
import type { Manifest } from '../engine/packages/manifest';
import { startTestEngine, type TestEngine, taskView, VIDEO } from './helpers/engine';
import { type Matching, matchEvents, type SeenEvent } from './helpers/event-match';
import { eventually } from './helpers/eventually';
import { EXAMPLE_MANIFEST, installPackage } from './helpers/example-package';
import { Receiver } from './helpers/receiver';
import {
  type SceneRect,
  type SceneRule,
  STILL_SCENE,
  sceneTruth,
  stillSceneClip,
} from './helpers/still-scene';

/**
 * Issue 36, "Accuracy held": the motion gate must keep the events of detecting every frame in full.
 * Every clip (the fixture video, and a synthetic still scene with a walker far off and one near, a
 * loiterer and a bicycle left behind) plays through one real engine as three tasks at once: the gate
 * on, the gate off (the reference), and the gate off again (the twin), with one package whose apps
 * cover each rule kind: every person once a second (for track ids), an intrusion zone, a counting
 * line, loitering and a left object. The gate-on task's events are matched against the reference's
 * by rule, time and place; where the clip has a ground truth (the still scene) all three are also
 * matched against it. The twin measures what differs between two runs without any gate (a frame
 * dropped for CPU on a loaded machine; a rule's `interval` between callbacks, which counts by the
 * frames' arrival, not the media's clock): the bounds allow for it (floor(), and one event per rule
 * kind found 5 times or more).
 */

const run = promisify(execFile);
const ANALYSIS_FPS = 5;
/**
 * Files play at half real time, so no task drops a frame for lack of CPU even on a loaded machine:
 * every task then analyses the very same frames, and what differs is mostly the gate's doing. Rules
 * and the gate time frames on the media's clock; the callbacks' `interval` alone counts by arrival.
 */
const READ_RATE = 0.5;
/**
 * Events three frame intervals apart are the same event: a stay or a left object is timed from its
 * first sighting, which a frame dropped for CPU (either task) or seen a frame later moves.
 */
const SAME_EVENT = { withinS: 3 / ANALYSIS_FPS, withinBoxes: 0.5 };
/**
 * An event is true when it reports the scene's object within 2 s and one box of where the scene has
 * it: the truth knows when a rule's condition holds, not the tracker's confirmation and stationary
 * delays before it may fire (a left object fired 1.9 s after its truth in the reference).
 */
const TRUE_EVENT = { withinS: 2, withinBoxes: 1 };
const MIN_RECALL = 0.98;
/** The gate-on task's fields and the reference's: the gate as the task field of capacity-api.md. */
const GATE_ON = { motion_gate: true };
const GATE_OFF = { motion_gate: false };

type Message = Extract<CallbackBody, { event: 'message' }>;
type Polygon = number[][];
const rect = (r: SceneRect): Polygon => [
  [r.x1, r.y1],
  [r.x2, r.y1],
  [r.x2, r.y2],
  [r.x1, r.y2],
];

/**
 * The test's package: the example's model (examples/coco-yolox-nano) with an app per rule kind. Rule
 * ids are <app_id>:<class_id>, so each app's events are told apart by them.
 */
function accuracyManifest(): Manifest {
  const example = JSON.parse(readFileSync(EXAMPLE_MANIFEST, 'utf8')) as Manifest;
  const from = dirname(EXAMPLE_MANIFEST);
  const model = example.models['yolox-nano'];
  if (!model?.file || typeof model.labels !== 'string') throw new Error('the example model has changed');
  const entry = (class_id: string, name: string) => ({
    class_id,
    name,
    color: '#ff3b30',
    threshold: 0.5,
    min_pixel: 0,
    max_pixel: 0,
  });
  const person = [entry('0', 'person')];
  const app = (app_id: string, type: 1 | 3, rule: Manifest['apps'][number]['rule']) => ({
    app_id,
    name: app_id,
    type,
    model: 'yolox-nano',
    rule,
    license_expire: 0,
    perpetual: true,
  });
  return {
    ...example,
    zapk_id: 'gate-accuracy',
    name: 'Motion gate accuracy',
    models: {
      'yolox-nano': { ...model, file: resolve(from, model.file), labels: resolve(from, model.labels) },
    },
    apps: [
      // Every person once a second: the track ids the fragmentation is counted from.
      app('tracks', 1, {
        interval: 1,
        classes: person,
        // A counter with no bounds fires every interval, with every person present.
        counter: { numeric_type: 0, distance: 0, min_count: 0, max_count: 0, class_counts: [] },
      }),
      app('intrusion', 1, { interval: 2, classes: person }),
      app('cross', 3, { interval: 0, classes: person }),
      app('loiter', 3, { interval: 5, classes: person }),
      app('left', 3, { classes: [entry('1', 'bicycle')], left_object: { seconds: 4, radius: 1 } }),
    ],
  } as Manifest;
}

const APP_IDS = ['tracks', 'intrusion', 'cross', 'loiter', 'left'];
const TRACKS = 'tracks:counter';
const RULES = [TRACKS, 'intrusion:0', 'cross:0', 'loiter:0', 'left:1'];

interface Clip {
  name: string;
  file: string;
  seconds: number;
  app_configs: Array<{ app_id: string; polygon: Polygon }>;
  rule_overrides?: Record<string, { interval: number }>;
  /** The events each rule should fire, by rule id, where the clip has a ground truth. */
  truth?: Record<string, SeenEvent[]>;
}

/**
 * The fixture video (768x576, 10 fps, 79.5 s of people walking a square): a line and a zone across
 * it. Played as an H.264 copy made here (near lossless): its MS-MPEG4v3 cannot be kept for clips, so
 * the engine would reopen its ffmpeg at the time played to, and frame numbers would no longer be
 * the clip's clock (the reopen's start-up differs between tasks by up to half a second).
 */
async function fixtureClip(dir: string): Promise<Clip> {
  const file = join(dir, 'vtest.mp4');
  await run(findFfmpeg(), [
    ...['-v', 'error', '-y', '-i', VIDEO, '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '12'],
    ...['-g', '10', '-pix_fmt', 'yuv420p', file],
  ]);
  return {
    name: 'vtest.avi',
    file,
    seconds: 79.5,
    app_configs: [
      {
        app_id: 'cross',
        polygon: [
          [384, 0],
          [384, 575],
        ],
      },
      { app_id: 'intrusion', polygon: rect({ x1: 0, y1: 288, x2: 384, y2: 575 }) },
    ],
  };
}

/** The still scene (test/helpers/still-scene.ts) with its rules' areas, and what each should fire. */
async function stillClip(dir: string): Promise<Clip> {
  const line = 640;
  const zone: SceneRect = { x1: 700, y1: 300, x2: 1279, y2: 719 };
  // Wider than the near walker crosses in 6 s, so only the one who stops loiters.
  const stay: SceneRect = { x1: 850, y1: 250, x2: 1279, y2: 719 };
  const loiterS = 6;
  const frames = Array.from({ length: STILL_SCENE.seconds * ANALYSIS_FPS }, (_, i) => i / ANALYSIS_FPS);
  const truth = (rule: string, classId: string, what: SceneRule) => sceneTruth(rule, classId, what);
  return {
    name: 'still scene',
    file: await stillSceneClip(dir),
    seconds: STILL_SCENE.seconds,
    app_configs: [
      {
        app_id: 'cross',
        polygon: [
          [line, 60],
          [line, 719],
        ],
      },
      { app_id: 'intrusion', polygon: rect(zone) },
      { app_id: 'loiter', polygon: rect(stay) },
    ],
    rule_overrides: { loiter: { interval: loiterS } },
    truth: {
      TRACKS: truth(TRACKS, '0', { kind: 'present', region: null, at: frames }),
      'intrusion:0': truth('intrusion:0', '0', { kind: 'present', region: zone, at: frames }),
      'cross:0': truth('cross:0', '0', { kind: 'crossing', lineX: line }),
      'loiter:0': truth('loiter:0', '0', { kind: 'stay', region: stay, seconds: loiterS }),
      'left:1': truth('left:1', '1', { kind: 'left', seconds: 4, radius: 1 }),
    },
  };
}

interface Run {
  taskId: string;
  health: TaskHealth;
  events: SeenEvent[];
}

let t: TestEngine;
let receiver: Receiver;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-gate-accuracy-'));
  const manifest = join(dir, 'manifest.json');
  writeFileSync(manifest, JSON.stringify(accuracyManifest()));
  t = await startTestEngine(undefined, undefined, { fileReadRate: READ_RATE });
  receiver = await Receiver.start();
  expect(await installPackage(t, manifest)).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const messagesOf = (taskId: string): Message[] =>
  receiver.accepted
    .map((r) => r.body as CallbackBody)
    .filter((b): b is Message => b.event === 'message' && b.task_id === taskId);

/**
 * A task on the clip until it has analysed a few frames, then closed. A model loads in an inference
 * host on its first frame and runs on that host alone until the frame is done: the six tasks' first
 * frames would queue behind the load, and each task would drop a frame of its own after them (the
 * noise that made the reference, its twin and the gate-on task differ by one alarm or a few).
 */
async function warmUp(clip: Clip): Promise<void> {
  const taskId = await startTask(clip, GATE_OFF);
  await eventually(
    'the warm-up task analysing',
    async () => (await taskView(t, taskId)).health.frames_analysed >= 3,
    60_000,
    200,
  );
  expect((await t.call('DELETE', `/api/task/${taskId}`)).body.code).toBe(0);
}

async function startTask(clip: Clip, gate: object): Promise<string> {
  const started = await t.call('POST', '/api/task', {
    json: {
      zapk_id: 'gate-accuracy',
      app_ids: APP_IDS,
      video_url: clip.file,
      report_url: receiver.url,
      analysis_fps: ANALYSIS_FPS,
      app_configs: clip.app_configs,
      ...(clip.rule_overrides && { rule_overrides: clip.rule_overrides }),
      ...gate,
    },
  });
  expect(started.body.code, started.body.msg).toBe(0);
  return (started.body.data as { task_id: string }).task_id;
}

/** One task on the clip, played once through: its events of the first pass, and its health at the end. */
async function play(clip: Clip, gate: object): Promise<Run> {
  const taskId = await startTask(clip, gate);
  // The clip's clock: frame n of the analysis rate (ffmpeg's fps filter) is at (n - 1) / rate s, the
  // same frames for every task, whatever each drops. Files loop: the pass is over once a frame past
  // its last has been taken (the gate's skipped frames count as analysed).
  const frames = Math.ceil(clip.seconds * ANALYSIS_FPS);
  let { health } = await taskView(t, taskId);
  for (
    const end = Date.now() + (clip.seconds / READ_RATE + 90) * 1000;
    health.frames_analysed + health.frames_dropped <= frames + 2;
  ) {
    if (Date.now() > end)
      throw new Error(`${clip.name}: ${health.frames_analysed} frames analysed of ${frames}`);
    await new Promise((done) => setTimeout(done, 500));
    ({ health } = await taskView(t, taskId));
  }
  expect(health.stream?.reconnects, `${clip.name}: its stream reconnected, which restarts the clip`).toBe(0);
  expect((await t.call('DELETE', `/api/task/${taskId}`)).body.code).toBe(0);
  // Callbacks go out in seq order: task_closed comes after every event of the task.
  await receiver.waitFor(
    `${clip.name}: task_closed`,
    () => receiver.accepted.some((r) => r.body?.event === 'task_closed' && r.body.task_id === taskId),
    60_000,
  );
  const events = messagesOf(taskId).flatMap((m) =>
    m.data.rules.flatMap((rule) =>
      rule.objects.map((o) => ({
        rule: rule.id,
        t: (m.data.frame.id - 1) / ANALYSIS_FPS,
        x: o.x,
        y: o.y,
        w: o.w,
        h: o.h,
        track: o.track_id,
      })),
    ),
  );
  return { taskId, health, events: events.filter((e) => e.t < clip.seconds) };
}

/** A clip played by the gate-on task, the reference (gate off) and the reference's twin (gate off again). */
interface Played {
  clip: Clip;
  off: Run;
  on: Run;
  twin: Run;
}

interface Row {
  clip: string;
  rule: string;
  reference: number;
  gated: number;
  matched: number;
  recall: number;
  precision: number;
  /** A second gate-off task against the reference: the run-to-run noise. */
  twin: { events: number; matched: number; recall: number; precision: number };
  /** Against the ground truth, where the clip has one: the reference's, then the gate's, then the twin's. */
  truthPrecision: [number, number, number] | null;
  truthRecall: [number, number, number] | null;
  /** The same as counts: true events found, and events the truth does not hold (reference, gate, twin). */
  truthFound: [number, number, number] | null;
  truthFalse: [number, number, number] | null;
  /**
   * Fragmentation, the reference's then the gate's (the tracks rule only): track ids per walk where
   * the clip has a ground truth, else distinct track ids over the clip; and the twin's.
   */
  ids: [number, number] | null;
  twinIds: number | null;
}

const fixed = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
const distinct = (events: readonly SeenEvent[]) => new Set(events.map((e) => e.track)).size;
const pair = (p: readonly number[] | null) => (p ? p.map(fixed).join(' / ') : '-');

function rows({ clip, off, on, twin }: Played): Row[] {
  return RULES.map((rule) => {
    const reference = off.events.filter((e) => e.rule === rule);
    const gated = on.events.filter((e) => e.rule === rule);
    const again = twin.events.filter((e) => e.rule === rule);
    const match = matchEvents(reference, gated, SAME_EVENT);
    const noise = matchEvents(reference, again, SAME_EVENT);
    const truth = clip.truth?.[rule];
    const against = (events: SeenEvent[]): Matching | null =>
      truth ? matchEvents(truth, events, TRUE_EVENT) : null;
    const [offTruth, onTruth, twinTruth] = [against(reference), against(gated), against(again)];
    const tracks = rule === TRACKS;
    return {
      clip: clip.name,
      rule,
      reference: reference.length,
      gated: gated.length,
      matched: match.pairs.length,
      recall: match.recall,
      precision: match.precision,
      twin: {
        events: again.length,
        matched: noise.pairs.length,
        recall: noise.recall,
        precision: noise.precision,
      },
      truthPrecision:
        offTruth && onTruth && twinTruth
          ? [offTruth.precision, onTruth.precision, twinTruth.precision]
          : null,
      truthRecall:
        offTruth && onTruth && twinTruth ? [offTruth.recall, onTruth.recall, twinTruth.recall] : null,
      truthFound:
        offTruth && onTruth && twinTruth
          ? [offTruth.pairs.length, onTruth.pairs.length, twinTruth.pairs.length]
          : null,
      truthFalse:
        offTruth && onTruth && twinTruth
          ? [
              reference.length - offTruth.pairs.length,
              gated.length - onTruth.pairs.length,
              again.length - twinTruth.pairs.length,
            ]
          : null,
      ids: !tracks
        ? null
        : offTruth && onTruth
          ? [offTruth.idsPerTrack, onTruth.idsPerTrack]
          : [distinct(reference), distinct(gated)],
      twinIds: !tracks ? null : twinTruth ? twinTruth.idsPerTrack : distinct(again),
    };
  });
}

/** The gate's decisions over the run, from health.gate. */
const gated = ({ gate }: TaskHealth) =>
  `${gate.frames_skipped} frames skipped, ${gate.frames_regions} on regions, ${gate.frames_full} in full`;

function table(all: Row[], runs: Played[]): string {
  const head = [
    'clip',
    'rule',
    'reference events',
    'gate-on events',
    'matched',
    'recall',
    'precision',
    'twin recall / precision',
    'truth precision off / on / twin',
    'truth recall off / on / twin',
    'track ids (per walk, or distinct) off / on / twin',
  ].join(' | ');
  const lines = all.map((r) =>
    [
      r.clip,
      r.rule,
      r.reference,
      r.gated,
      r.matched,
      fixed(r.recall),
      fixed(r.precision),
      pair([r.twin.recall, r.twin.precision]),
      pair(r.truthPrecision),
      pair(r.truthRecall),
      pair(r.ids && r.twinIds !== null ? [...r.ids, r.twinIds] : null),
    ].join(' | '),
  );
  const health = runs.map(
    ({ clip, off, on, twin }) =>
      `${clip.name}: frames analysed off ${off.health.frames_analysed} / on ${on.health.frames_analysed} / twin ${twin.health.frames_analysed}, dropped for CPU ${off.health.frames_dropped} / ${on.health.frames_dropped} / ${twin.health.frames_dropped}, reconnects ${off.health.stream?.reconnects} / ${on.health.stream?.reconnects} / ${twin.health.stream?.reconnects}; gate on: ${gated(on.health)}`,
  );
  return [head, ...lines, ...health].join('\n');
}

/**
 * The least a gate-on share (recall or precision over `n` events) may be: a non-inferiority test
 * against the twin's share, with the margin the issue allows the gate (1 - MIN_RECALL) and two
 * standard errors of the difference of two such shares. Their spread is pooled from both tasks'
 * misses, not taken from the twin's alone: the reference and its twin often drop the very same frame
 * for CPU as all six tasks start (their models load), and then match exactly while the gate-on task,
 * which dropped another, differs as any third run would (CI: 103 of 106 beside a perfect twin, on a
 * clip where the gate skipped nothing). Never above MIN_RECALL.
 */
const floor = (on: number, twin: number, n: number) => {
  const miss = 1 - (on + twin) / 2;
  return Math.min(MIN_RECALL, twin - (1 - MIN_RECALL) - 2 * Math.sqrt((2 * miss * (1 - miss)) / n));
};

describe('the motion gate holds accuracy (issue 36)', () => {
  it('on every clip, gate-on alarms match the full-frame ones: recall and precision >= 0.98 (less the run-to-run noise), no true alarm lost, no more track ids', async () => {
    const clips = [await fixtureClip(dir), await stillClip(dir)];
    await warmUp(clips[0] as Clip);
    // Every task at once: at half real time the machine keeps up with all of them (the health line
    // prints the frames dropped), and the whole test takes one clip's playing.
    const runs: Played[] = await Promise.all(
      clips.map(async (clip) => {
        const [off, on, twin] = await Promise.all([
          play(clip, GATE_OFF),
          play(clip, GATE_ON),
          play(clip, GATE_OFF),
        ]);
        return { clip, off, on, twin };
      }),
    );
    const all = runs.flatMap(rows);
    const events = all.filter((row) => row.ids === null);
    // Precision against the reference where there is no truth: on the still scene the gate may
    // rightly find more (the far walker, on crops), which the truth, not the reference, judges.
    const untrue = events.filter((row) => row.truthPrecision === null);
    const sum = (rows: Row[], pick: (row: Row) => number) =>
      rows.reduce((total, row) => total + pick(row), 0);
    const overall = {
      recall: sum(events, (r) => r.matched) / sum(events, (r) => r.reference),
      precision: sum(untrue, (r) => r.matched) / sum(untrue, (r) => r.gated),
      twinRecall: sum(events, (r) => r.twin.matched) / sum(events, (r) => r.reference),
      twinPrecision: sum(untrue, (r) => r.twin.matched) / sum(untrue, (r) => r.twin.events),
    };
    const least = {
      recall: floor(
        overall.recall,
        overall.twinRecall,
        sum(events, (r) => r.reference),
      ),
      precision: floor(
        overall.precision,
        overall.twinPrecision,
        sum(untrue, (r) => r.gated),
      ),
    };
    const kinds = [...new Set(events.map((r) => r.rule))].join(', ');
    console.log(
      `${table(all, runs)}\nall alarms (${kinds}): ${sum(events, (r) => r.reference)} reference, ` +
        `${sum(events, (r) => r.gated)} gate-on, ${sum(events, (r) => r.matched)} matched: ` +
        `recall ${fixed(overall.recall)} (least ${fixed(least.recall)}), precision of the clips without a truth ` +
        `${fixed(overall.precision)} (least ${fixed(least.precision)}); twin recall ${fixed(overall.twinRecall)}, ` +
        `precision ${fixed(overall.twinPrecision)}`,
    );
    // The alarms of every clip and rule kind together: a single alarm of one kind is a few percent of it.
    expect(overall.recall, 'recall of all alarms').toBeGreaterThanOrEqual(least.recall);
    expect(overall.precision, 'precision of all alarms').toBeGreaterThanOrEqual(least.precision);
    for (const row of all) {
      const at = `${row.clip} ${row.rule}`;
      if (row.ids && row.twinIds !== null) {
        // The tracks rule samples every person once a second (its interval): it counts ids.
        expect(row.ids[1], `${at}: track ids`).toBeLessThanOrEqual(Math.max(row.ids[0], row.twinIds));
      }
      // Where the clip has a ground truth, each rule kind on its own: the gate finds what the
      // reference (or its twin) found of it, and reports nothing more the truth does not hold. A rule
      // kind the runs found 5 times or more may differ by one event, as two runs without any gate do
      // (a frame dropped for CPU as the six tasks start: the still scene's intrusions, 15 and 14);
      // one found less often must be found every time.
      if (row.truthFound && row.truthFalse && !row.ids) {
        const [foundOff, foundOn, foundTwin] = row.truthFound;
        const found = Math.min(foundOff, foundTwin);
        expect(foundOn, `${at}: true events found`).toBeGreaterThanOrEqual(found - (found >= 5 ? 1 : 0));
        const [falseOff, falseOn, falseTwin] = row.truthFalse;
        expect(falseOn, `${at}: events the truth does not hold`).toBeLessThanOrEqual(
          Math.max(falseOff, falseTwin) + (row.gated >= 5 ? 1 : 0),
        );
      }
    }
  }, 300_000);
});
