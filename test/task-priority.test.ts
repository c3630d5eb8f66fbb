import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { startMotionTask, startTestEngine, type TestEngine, taskView } from './helpers/engine';

/**
 * A task's priority (extension, cluster placement): given at start or update, validated, shown, kept
 * over a restart. A single workstation stores it and runs every task alike; it has no site to leave.
 */

describe('a task’s priority over the API', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => t?.stop());

  const start = (body: Record<string, unknown>) => startMotionTask(t, body);
  const view = (taskId: string) => taskView(t, taskId);
  const count = async () => ((await t.call('GET', '/api/tasks')).body.data as TaskView[]).length;

  it('is 50 unless given; given, it is shown, listed, changed by an update and kept over a restart', async () => {
    const plain = await view(((await start({})).body.data as TaskView).task_id);
    expect(plain.priority).toBe(50);
    const own = await start({ priority: 80 });
    expect(own.body.code, own.body.msg).toBe(0);
    const taskId = (own.body.data as TaskView).task_id;
    expect((await view(taskId)).priority).toBe(80);
    const listed = (await t.call('GET', '/api/tasks')).body.data as TaskView[];
    expect(Object.fromEntries(listed.map((task) => [task.task_id, task.priority]))).toEqual({
      [plain.task_id]: 50,
      [taskId]: 80,
    });
    // An update of something else keeps it; an update of it changes it.
    await t.call('PUT', `/api/task/${taskId}`, { json: { name: 'gate' } });
    expect((await view(taskId)).priority).toBe(80);
    const updated = await t.call('PUT', `/api/task/${taskId}`, { json: { priority: 0 } });
    expect(updated.body.code, updated.body.msg).toBe(0);
    expect((await view(taskId)).priority).toBe(0);
    await t.engine.close();
    t = await startTestEngine(t.dataDir);
    expect([(await view(taskId)).priority, (await view(plain.task_id)).priority]).toEqual([0, 50]);
    await t.call('DELETE', `/api/task/${taskId}`);
    await t.call('DELETE', `/api/task/${plain.task_id}`);
  }, 60_000);

  it('refuses a priority that is not a whole number from 0 to 100, naming the field, and changes nothing', async () => {
    const before = await count();
    for (const priority of [-1, 101, 2.5, '50', null, true]) {
      const answer = await start({ priority });
      expect(answer.status, JSON.stringify(priority)).toBe(400);
      expect(answer.body).toMatchObject({ code: 40001, field: 'priority' });
    }
    expect(await count()).toBe(before);
    const taskId = ((await start({ priority: 70 })).body.data as TaskView).task_id;
    for (const priority of [1000, -5, 'high', null]) {
      const answer = await t.call('PUT', `/api/task/${taskId}`, { json: { priority } });
      expect(answer.status, JSON.stringify(priority)).toBe(400);
      expect(answer.body).toMatchObject({ code: 40001, field: 'priority' });
    }
    expect((await view(taskId)).priority).toBe(70);
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 60_000);

  it('a single workstation has no site to leave: 409 40907, its tasks run on', async () => {
    const taskId = ((await start({})).body.data as TaskView).task_id;
    const answer = await t.call('POST', '/api/cluster/leave');
    expect([answer.status, answer.body.code]).toEqual([409, 40907]);
    expect((await view(taskId)).status).toBe('running');
    // Authentication first, decided by the matched route.
    const anonymous = await t.call('POST', '/api/cluster/leave', { token: null });
    expect([anonymous.status, anonymous.body.code]).toEqual([401, 40101]);
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 60_000);
});
