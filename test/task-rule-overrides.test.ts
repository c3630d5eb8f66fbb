import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OptimizationView, Proposal, SamplePage } from '../engine/optimization/schema';
import type { TaskView } from '../engine/tasks/schema';
import { startMotionTask, startTestEngine, type TestEngine, taskView } from './helpers/engine';
import { eventually } from './helpers/eventually';

/**
 * Per-camera overrides of an app's rule (issue 34, point 11) over the real API and a real engine:
 * two cameras on the built-in motion app (its ffmpeg-decoded fixture video), one with an override.
 */

describe("a camera's overrides of its app's rule", () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => t?.stop());

  const start = (body: Record<string, unknown>) => startMotionTask(t, body);
  const view = (taskId: string) => taskView(t, taskId);
  const events = async (taskId: string) =>
    (
      (await t.call('GET', `/api/task/${taskId}/events?limit=500`)).body.data as {
        items: Array<{ event: string }>;
      }
    ).items.filter((item) => item.event === 'message').length;
  const appRule = async () =>
    (
      (await t.call('GET', '/api/zapk')).body.data as Array<{
        zapk_id: string;
        apps: Record<string, { rule: { interval: number; classes: Record<string, { min_pixel: number }> } }>;
      }>
    ).find((pkg) => pkg.zapk_id === 'builtin')?.apps.motion?.rule;
  const editApp = (rule: Record<string, unknown>) =>
    t.call('PUT', '/api/zapk/builtin/app/motion', { json: { rule } });
  const motionClass = { class_id: '0', name: 'motion', color: '#ffcc00', threshold: 0.5, max_pixel: 0 };

  it('refuses a bad override with an envelope error, naming the field, and changes nothing', async () => {
    const before = ((await t.call('GET', '/api/tasks')).body.data as TaskView[]).length;
    const refusals: Array<[unknown, string]> = [
      [
        { motion: { classes: [{ class_id: '0', threshold: 2 }] } },
        'rule_overrides.motion.classes[0].threshold',
      ],
      [{ motion: { colour: 'red' } }, 'rule_overrides.motion.colour'],
      [{ motion: { classes: [{ class_id: '7', threshold: 0.4 }] } }, 'rule_overrides.motion'],
      [{ motion: { counter: { max_count: 3 } } }, 'rule_overrides.motion'],
      // Cross-field, on the rule this camera would run.
      [{ motion: { classes: [{ class_id: '0', min_pixel: 90, max_pixel: 40 }] } }, 'rule_overrides.motion'],
      [{ motion: { inertia: { hits: 6, frames: 5 } } }, 'rule_overrides.motion'],
      [{ intrusion: { interval: 3 } }, 'rule_overrides.intrusion'],
    ];
    for (const [rule_overrides, field] of refusals) {
      const answer = await start({ rule_overrides });
      expect(answer.status, JSON.stringify(rule_overrides)).toBe(400);
      expect(answer.body, JSON.stringify(rule_overrides)).toMatchObject({ code: 40001, field });
      expect(answer.body.msg).toMatch(/^body\.rule_overrides/);
    }
    expect(((await t.call('GET', '/api/tasks')).body.data as TaskView[]).length).toBe(before);

    const taskId = ((await start({ rule_overrides: { motion: { interval: 9 } } })).body.data as TaskView)
      .task_id;
    for (const [rule_overrides, field] of refusals) {
      const answer = await t.call('PUT', `/api/task/${taskId}`, { json: { rule_overrides } });
      expect(answer.status, JSON.stringify(rule_overrides)).toBe(400);
      expect(answer.body).toMatchObject({ code: 40001, field });
    }
    expect((await view(taskId)).rule_overrides).toEqual({ motion: { interval: 9 } });
    const image = await start({ mode: 'image', video_url: undefined, rule_overrides: {} });
    expect(image.body).toMatchObject({ code: 40001, field: 'rule_overrides' });
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 90_000);

  it('lays the override over the app rule on one camera only; an app edit still reaches its other fields', async () => {
    // The app's rule as edited: boxes of 5000 px and more only, which the fixture's walkers never are.
    const edited = await editApp({ interval: 1, classes: [{ ...motionClass, min_pixel: 5000 }] });
    expect(edited.body.code, edited.body.msg).toBe(0);
    const a = await start({
      name: 'Gate A',
      rule_overrides: { motion: { classes: [{ class_id: '0', min_pixel: 16 }] } },
    });
    expect(a.body.code, a.body.msg).toBe(0);
    const b = await start({ name: 'Gate B' });
    const [taskA, taskB] = [(a.body.data as TaskView).task_id, (b.body.data as TaskView).task_id];
    expect((await view(taskA)).rule_overrides).toEqual({
      motion: { classes: [{ class_id: '0', min_pixel: 16 }] },
    });
    expect((await view(taskB)).rule_overrides).toEqual({});

    // Camera A alarms under its own min_pixel; camera B, under the app's, never.
    await eventually('camera A alarms', async () => (await events(taskA)) >= 2);
    expect(await events(taskB)).toBe(0);

    // An app edit of a field A does not override (interval: one alarm a minute at most) reaches A
    // too, while A keeps its own min_pixel (the app's 5000 would silence it altogether).
    const slowed = await editApp({ interval: 60 });
    expect(slowed.body.code, slowed.body.msg).toBe(0);
    const settled = await events(taskA);
    await new Promise((done) => setTimeout(done, 5_000));
    const quiet = await events(taskA);
    expect(quiet - settled).toBeLessThanOrEqual(1);
    await editApp({ interval: 1 });
    await eventually('camera A alarms again', async () => (await events(taskA)) >= quiet + 2);
    expect(await events(taskB)).toBe(0);

    // Removing the override gives A the app's rule back, live.
    const removed = await t.call('PUT', `/api/task/${taskA}`, { json: { rule_overrides: { motion: null } } });
    expect(removed.body.code, removed.body.msg).toBe(0);
    expect((removed.body.data as TaskView).rule_overrides).toEqual({});
    const stopped = await events(taskA);
    await new Promise((done) => setTimeout(done, 4_000));
    expect((await events(taskA)) - stopped).toBeLessThanOrEqual(1);
    expect((await appRule())?.classes['0']?.min_pixel).toBe(5000);
    await t.call('DELETE', `/api/task/${taskA}`);
    await t.call('DELETE', `/api/task/${taskB}`);
  }, 120_000);

  it('keeps the overrides over an engine restart and in the start-again body', async () => {
    const overrides = { motion: { interval: 7, classes: [{ class_id: '0', threshold: 0.4 }] } };
    const taskId = ((await start({ rule_overrides: overrides })).body.data as TaskView).task_id;
    const listed = ((await t.call('GET', '/api/tasks')).body.data as TaskView[]).find(
      (task) => task.task_id === taskId,
    );
    expect(listed?.rule_overrides).toEqual(overrides);
    await t.engine.close();
    t = await startTestEngine(t.dataDir);
    expect((await view(taskId)).rule_overrides).toEqual(overrides);
    await t.call('DELETE', `/api/task/${taskId}`);
    const again = await t.call('POST', `/api/task/${taskId}/start-again`);
    expect(again.body.code, again.body.msg).toBe(0);
    const restarted = (again.body.data as { task_id: string }).task_id;
    expect((await view(restarted)).rule_overrides).toEqual(overrides);
    await t.call('DELETE', `/api/task/${restarted}`);
  }, 90_000);

  it('proposes a threshold only from judged samples, to the camera or to the app by choice', async () => {
    await editApp({ interval: 5, classes: [{ ...motionClass, min_pixel: 16 }] });
    const taskId = ((await start({})).body.data as TaskView).task_id;
    const run = await t.call('POST', `/api/task/${taskId}/optimization`, {
      json: { app_ids: ['motion'], duration: 10 },
    });
    expect(run.body.code, run.body.msg).toBe(0);
    const runPath = `/api/task/${taskId}/optimization/${(run.body.data as { optimization_id: string }).optimization_id}`;
    const runView = async () => (await t.call('GET', runPath)).body.data as OptimizationView;
    // The motion app's walkers flicker: the run has samples and track statistics, and no verdict.
    const unjudged = await eventually('samples collected', async () => {
      const view = await runView();
      return view.sample_count >= 2 && (view.proposals[0]?.basis.flickering_tracks ?? 0) > 0 && view;
    });
    expect(unjudged.proposals[0]).toMatchObject({
      judged: 0,
      proposed_threshold: null,
      apply: null,
      apply_camera: null,
    });

    // One sample judged wrong: a proposal resting on it, offered for the camera and for the app.
    const samples = (await t.call('GET', `${runPath}/samples`)).body.data as SamplePage;
    const sample = samples.items.find((item) => item.annotations.some((a) => a.class_id === '0'));
    expect(sample, 'a sample with a motion detection').toBeDefined();
    const judged = await t.call('PUT', `${runPath}/samples/${sample?.sample_id}`, {
      json: { verdict: 'wrong' },
    });
    expect(judged.body.code, judged.body.msg).toBe(0);
    const proposal = (await runView()).proposals[0] as Proposal;
    expect(proposal.judged).toBeGreaterThanOrEqual(1);
    expect(proposal.proposed_threshold).not.toBeNull();
    expect(proposal.apply?.path).toBe('/api/zapk/builtin/app/motion');
    expect(proposal.apply_camera).toEqual({
      method: 'PUT',
      path: `/api/task/${taskId}`,
      body: {
        rule_overrides: { motion: { classes: [{ class_id: '0', threshold: proposal.proposed_threshold }] } },
      },
    });
    // Applied to the camera: its override, the app's rule untouched; the proposal's current is the camera's.
    const applied = await t.call('PUT', proposal.apply_camera?.path as string, {
      json: proposal.apply_camera?.body,
    });
    expect(applied.body.code, applied.body.msg).toBe(0);
    expect((await view(taskId)).rule_overrides.motion?.classes?.[0]?.threshold).toBe(
      proposal.proposed_threshold,
    );
    expect(Object.values((await appRule())?.classes ?? {})[0]).toMatchObject({ threshold: 0.5 });
    const after = (await runView()).proposals[0] as Proposal;
    expect([after.current_threshold, after.app_threshold]).toEqual([proposal.proposed_threshold, 0.5]);
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 90_000);
});
