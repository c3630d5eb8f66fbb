import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { startMotionTask, startTestEngine, type TestEngine, taskView } from './helpers/engine';

/**
 * A task's GPU constraint (extension, cluster placement): given at start or update, validated, shown,
 * listed, kept over a restart. A single workstation has no other node to send the task to: it runs a
 * task that requires a GPU on the provider it has, and GET /api/system says which (docs/api.md).
 */

describe('a task’s GPU constraint over the API', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => t?.stop());

  const start = (body: Record<string, unknown>) => startMotionTask(t, body);
  const view = (taskId: string) => taskView(t, taskId);
  const count = async () => ((await t.call('GET', '/api/tasks')).body.data as TaskView[]).length;

  it('is none unless given; given, it is shown, listed, changed by an update and kept over a restart', async () => {
    const plain = await view(((await start({})).body.data as TaskView).task_id);
    expect(plain.gpu).toBe('none');
    const own = await start({ gpu: 'required' });
    expect(own.body.code, own.body.msg).toBe(0);
    const taskId = (own.body.data as TaskView).task_id;
    expect((await view(taskId)).gpu).toBe('required');
    const listed = (await t.call('GET', '/api/tasks')).body.data as TaskView[];
    expect(Object.fromEntries(listed.map((task) => [task.task_id, task.gpu]))).toEqual({
      [plain.task_id]: 'none',
      [taskId]: 'required',
    });
    // An update of something else keeps it; an update of it changes it.
    await t.call('PUT', `/api/task/${taskId}`, { json: { name: 'gate' } });
    expect((await view(taskId)).gpu).toBe('required');
    const updated = await t.call('PUT', `/api/task/${taskId}`, { json: { gpu: 'preferred' } });
    expect(updated.body.code, updated.body.msg).toBe(0);
    expect((await view(taskId)).gpu).toBe('preferred');
    await t.engine.close();
    t = await startTestEngine(t.dataDir);
    expect([(await view(taskId)).gpu, (await view(plain.task_id)).gpu]).toEqual(['preferred', 'none']);
    await t.call('DELETE', `/api/task/${taskId}`);
    await t.call('DELETE', `/api/task/${plain.task_id}`);
  }, 60_000);

  it('refuses a value other than none, preferred or required, naming the field, and changes nothing', async () => {
    const before = await count();
    for (const gpu of ['cuda', 'REQUIRED', '', true, 1, null]) {
      const answer = await start({ gpu });
      expect(answer.status, JSON.stringify(gpu)).toBe(400);
      expect(answer.body).toMatchObject({ code: 40001, field: 'gpu' });
    }
    expect(await count()).toBe(before);
    const taskId = ((await start({ gpu: 'preferred' })).body.data as TaskView).task_id;
    for (const gpu of ['yes', false, null]) {
      const answer = await t.call('PUT', `/api/task/${taskId}`, { json: { gpu } });
      expect(answer.status, JSON.stringify(gpu)).toBe(400);
      expect(answer.body).toMatchObject({ code: 40001, field: 'gpu' });
    }
    expect((await view(taskId)).gpu).toBe('preferred');
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 60_000);

  it('a workstation without a GPU runs a task that requires one all the same', async () => {
    const taskId = ((await start({ gpu: 'required' })).body.data as TaskView).task_id;
    await expect
      .poll(async () => (await view(taskId)).health.frames_analysed, { timeout: 30_000, interval: 250 })
      .toBeGreaterThan(0);
    expect((await view(taskId)).status).toBe('running');
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 60_000);
});
