import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';

/** Per-task analysis rate (extension): given at start or update, validated, applied live, kept over a restart. */

describe('a task’s analysis_fps over the API', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine(undefined, undefined, { analysisFps: 3 });
  });
  afterAll(async () => t?.stop());

  const start = (body: Record<string, unknown>) =>
    t.call('POST', '/api/task', {
      json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO, ...body },
    });
  const view = async (taskId: string) => (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
  const listed = async (taskId: string) =>
    ((await t.call('GET', '/api/tasks')).body.data as TaskView[]).find((task) => task.task_id === taskId);
  /**
   * The analysis settles near the rate asked of ffmpeg, while the source is still seen delivering
   * its own 10 fps (the fixture's rate, counted before ffmpeg drops frames to the task's).
   */
  const sourceNear = (taskId: string, fps: number) =>
    eventually(`analysis at ${fps} fps of a 10 fps source`, async () => {
      const { health } = await view(taskId);
      const source = health.stream?.fps ?? 0;
      return Math.abs(health.analysed_fps - fps) <= 1 && Math.abs(source - 10) <= 1.5 && health;
    });

  it('takes the engine’s rate when none is given, and a task’s own when given', async () => {
    const plain = await view(((await start({})).body.data as TaskView).task_id);
    expect(plain.analysis_fps).toBe(3);
    expect(plain.health.target_fps).toBe(3);
    const own = await start({ analysis_fps: 2 });
    expect(own.body.code, own.body.msg).toBe(0);
    const taskId = (own.body.data as TaskView).task_id;
    expect(await listed(taskId)).toMatchObject({ analysis_fps: 2, health: { target_fps: 2 } });
    await sourceNear(taskId, 2);
    await t.call('DELETE', `/api/task/${plain.task_id}`);
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 60_000);

  it('refuses a rate outside 0.1..60 or not a number, naming the field, and changes nothing', async () => {
    const before = ((await t.call('GET', '/api/tasks')).body.data as TaskView[]).length;
    for (const analysis_fps of [0, 0.05, 61, -1, '5', null]) {
      const answer = await start({ analysis_fps });
      expect(answer.status, JSON.stringify(analysis_fps)).toBe(400);
      expect(answer.body).toMatchObject({ code: 40001, field: 'analysis_fps' });
    }
    expect(((await t.call('GET', '/api/tasks')).body.data as TaskView[]).length).toBe(before);

    const taskId = ((await start({ analysis_fps: 4 })).body.data as TaskView).task_id;
    for (const analysis_fps of [0, 100, 'fast']) {
      const answer = await t.call('PUT', `/api/task/${taskId}`, { json: { analysis_fps } });
      expect(answer.status, JSON.stringify(analysis_fps)).toBe(400);
      expect(answer.body).toMatchObject({ code: 40001, field: 'analysis_fps' });
    }
    expect((await view(taskId)).analysis_fps).toBe(4);
    await t.call('DELETE', `/api/task/${taskId}`);

    const image = await start({ mode: 'image', video_url: undefined, analysis_fps: 2 });
    expect(image.status).toBe(400);
    expect(image.body).toMatchObject({ code: 40001, field: 'analysis_fps' });
  }, 60_000);

  it('applies an update to the running stream and keeps it over an engine restart', async () => {
    const taskId = ((await start({ analysis_fps: 2 })).body.data as TaskView).task_id;
    await sourceNear(taskId, 2);
    const updated = await t.call('PUT', `/api/task/${taskId}`, { json: { analysis_fps: 6 } });
    expect(updated.body.code, updated.body.msg).toBe(0);
    expect((await view(taskId)).analysis_fps).toBe(6);
    await sourceNear(taskId, 6);
    const analysed = await eventually('analysis at the new rate', async () => {
      const fps = (await view(taskId)).health.analysed_fps;
      return fps >= 4 && fps;
    });
    expect(analysed).toBeLessThanOrEqual(7);

    await t.engine.close();
    t = await startTestEngine(t.dataDir, undefined, { analysisFps: 3 });
    expect(await view(taskId)).toMatchObject({ analysis_fps: 6, health: { target_fps: 6 } });
    await sourceNear(taskId, 6);
    // null gives the rate back to the engine's setting.
    const cleared = await t.call('PUT', `/api/task/${taskId}`, { json: { analysis_fps: null } });
    expect(cleared.body.code, cleared.body.msg).toBe(0);
    expect(await view(taskId)).toMatchObject({ analysis_fps: 3, health: { target_fps: 3 } });
    await sourceNear(taskId, 3);
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 90_000);
});
