import { describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock';
import type { InstalledApp } from '../engine/packages/registry';
import type { PipelineTask } from '../engine/pipeline/task-pipeline';
import { layRule, type RuleOverride } from '../engine/rules/override';
import { APP_TYPE, type Rule } from '../engine/rules/schema';
import { RULE_OVERRIDES_BYTES } from '../engine/tasks/limits';
import { PackageUse } from '../engine/tasks/package-use';
import { TaskRegistry, type VideoRunner } from '../engine/tasks/registry';
import type { TaskRow } from '../engine/tasks/task-repository';
import { MemorySettings, MemoryTaskStore } from './helpers/memory-task-store';

/**
 * A camera's override laid over its app's rule (engine/rules/override.ts), and the task record a
 * node of a cluster adopts carrying it. The engine around them is tested in task-rule-overrides.test.ts.
 */

const PERSON = {
  class_id: '0',
  name: 'person',
  color: '#ff0000',
  threshold: 0.5,
  min_pixel: 0,
  max_pixel: 0,
};
const CAR = { class_id: '2', name: 'car', color: '#0000ff', threshold: 0.6, min_pixel: 10, max_pixel: 0 };
const RULE: Rule = {
  interval: 30,
  classes: [PERSON, CAR],
  left_object: { seconds: 60, radius: 2 },
  inertia: { hits: 3, frames: 5 },
};

describe('layRule', () => {
  it('takes the override where it has a value and the app rule everywhere else', () => {
    const override: RuleOverride = {
      interval: 5,
      classes: [{ class_id: '2', threshold: 0.8 }],
      left_object: { seconds: 20 },
    };
    expect(layRule(RULE, override)).toEqual({
      interval: 5,
      classes: [PERSON, { ...CAR, threshold: 0.8 }],
      left_object: { seconds: 20, radius: 2 },
      inertia: { hits: 3, frames: 5 },
    });
    expect(layRule(RULE, undefined)).toBe(RULE);
  });

  it("follows a later edit of the app's rule in every field the override leaves out", () => {
    const override: RuleOverride = { classes: [{ class_id: '2', threshold: 0.8 }] };
    const edited: Rule = {
      ...RULE,
      interval: 90,
      classes: [
        { ...PERSON, threshold: 0.3 },
        { ...CAR, threshold: 0.4, color: '#00ff00', min_pixel: 40 },
      ],
    };
    expect(layRule(edited, override)).toEqual({
      ...edited,
      classes: [
        { ...PERSON, threshold: 0.3 },
        { ...CAR, threshold: 0.8, color: '#00ff00', min_pixel: 40 },
      ],
    });
  });

  it('leaves out an override of a part the app rule no longer has, never half-made', () => {
    const override: RuleOverride = {
      left_object: { seconds: 20 },
      classes: [{ class_id: '2', threshold: 0.8 }],
    };
    const { left_object: _gone, ...withoutLeft } = RULE;
    const laid = layRule({ ...withoutLeft, classes: [PERSON] }, override);
    expect(laid.left_object).toBeUndefined();
    expect(laid.classes).toEqual([PERSON]);
  });
});

const app: InstalledApp = {
  zapk_id: 'builtin',
  app_id: 'watch',
  name: 'watch',
  type: APP_TYPE.detection,
  rule: RULE,
  license_expire: 0,
  perpetual: true,
  labels: ['person', 'bicycle', 'car'],
  model: {
    key: 'builtin/objects',
    name: 'builtin/objects',
    spec: {
      family: 'motion',
      labels: ['person'],
      score_threshold: 0.5,
      nms_iou: 0.5,
      class_agnostic_nms: false,
    },
    file: null,
  },
};

/** One node: a registry on its own store, with a runner that records the tasks it is handed. */
function node() {
  const handed: PipelineTask[] = [];
  const runner: VideoRunner = {
    start: async (task) => {
      handed.push(task);
      return { width: 640, height: 480 };
    },
    update: (task) => handed.push(task),
    stop: async () => {},
    health: () => undefined,
    clockBreaks: { total: 0, lastAt: null },
    on: () => runner,
  };
  const store = new MemoryTaskStore();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const tasks = new TaskRegistry(
    store,
    new MemorySettings(),
    new PackageUse(store),
    clock,
    { app: () => app },
    runner,
  );
  return { tasks, handed, runner };
}

describe('the task record another node adopts (cluster mode)', () => {
  it('carries the overrides: the adopter shows them and runs the app under them', async () => {
    const owner = node();
    const overrides = { watch: { classes: [{ class_id: '2', threshold: 0.8 }] } };
    const started = await owner.tasks.start({
      zapk_id: 'builtin',
      app_ids: ['watch'],
      video_url: 'rtsp://camera.example/gate',
      rule_overrides: overrides,
    });
    // The site stores the row as JSON (engine/cluster/cluster-node.ts) and the adopter reads it back.
    const shared = JSON.parse(JSON.stringify(owner.tasks.storedRow(started.task_id))) as TaskRow;
    const adopter = node();
    adopter.tasks.adopt({ ...shared, status: 'running' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(adopter.tasks.get(started.task_id).rule_overrides).toEqual(overrides);
    expect(adopter.handed.at(-1)?.rule_overrides).toEqual(overrides);
  });

  it('adopts a row shared by an engine before overrides as having none', async () => {
    const owner = node();
    const started = await owner.tasks.start({
      zapk_id: 'builtin',
      app_ids: ['watch'],
      video_url: 'rtsp://camera.example/gate',
    });
    const { rule_overrides: _none, ...older } = owner.tasks.storedRow(started.task_id) as TaskRow;
    const adopter = node();
    adopter.tasks.adopt({ ...(older as TaskRow), status: 'running' });
    expect(adopter.tasks.get(started.task_id).rule_overrides).toEqual({});
  });
});

describe('the size of a task’s overrides', () => {
  it('refuses overrides past RULE_OVERRIDES_BYTES, naming the field, and stores nothing', async () => {
    const many = Array.from({ length: 300 }, (_, i) => ({ ...PERSON, class_id: String(i), name: `c${i}` }));
    const big: InstalledApp = { ...app, rule: { classes: many } };
    const store = new MemoryTaskStore();
    const tasks = new TaskRegistry(
      store,
      new MemorySettings(),
      new PackageUse(store),
      new ManualClock(Date.UTC(2026, 0, 1)),
      { app: () => big },
      node().runner,
    );
    const body = (count: number) => ({
      zapk_id: 'builtin',
      app_ids: ['watch'],
      video_url: 'rtsp://camera.example/gate',
      rule_overrides: {
        watch: { classes: many.slice(0, count).map((c) => ({ class_id: c.class_id, threshold: 0.75 })) },
      },
    });
    const refused = await tasks.start(body(300)).then(
      () => 'accepted',
      (error: { kind?: string; details?: unknown; message: string }) => error.message,
    );
    expect(refused).toMatch(new RegExp(`^body\\.rule_overrides: .* at most ${RULE_OVERRIDES_BYTES}$`));
    expect(store.notClosed()).toHaveLength(0);
    const fits = await tasks.start(body(50));
    expect(fits.rule_overrides.watch?.classes).toHaveLength(50);
  });
});
