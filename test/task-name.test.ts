import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { taskName } from '../engine/tasks/task-name';
import { startMotionTask, startTestEngine, type TestEngine, taskView } from './helpers/engine';

/** Cameras, not UUIDs: what a task is called, given or made up, and how a name is refused. */

describe('the name a task is shown with', () => {
  const base = { name: '', device_id: '', video_url: '', mode: 'video' as const };

  it('is the given name, else the device id, else the source without its credentials, else the mode', () => {
    expect(
      [
        { ...base, name: 'Gate 1', device_id: 'cam-7' },
        { ...base, device_id: ' cam-7 ' },
        { ...base, video_url: 'rtsp://admin:secret@10.0.0.5:554/Streaming/Channels/101?token=x' },
        { ...base, video_url: 'rtmp://media.local/live/' },
        { ...base, video_url: 'file:///srv/clips/loading%20bay.mp4' },
        { ...base, video_url: '/srv/clips/dock.mp4' },
        { ...base, mode: 'diff' as const },
        { ...base, device_id: 'x'.repeat(80) },
      ].map(taskName),
    ).toEqual([
      'Gate 1',
      'cam-7',
      '10.0.0.5/101',
      'media.local/live',
      'loading bay.mp4',
      'dock.mp4',
      'diff',
      `${'x'.repeat(63)}…`,
    ]);
  });
});

describe('task names over the API', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => t?.stop());

  const start = (body: Record<string, unknown>) => startMotionTask(t, body);
  const view = (taskId: string) => taskView(t, taskId);

  it('keeps a given name (trimmed), lists it, and changes it alone with an update', async () => {
    const started = await start({ name: '  Loading   bay ', device_id: 'cam-3' });
    expect(started.body.code, started.body.msg).toBe(0);
    const taskId = (started.body.data as TaskView).task_id;
    expect((await view(taskId)).name).toBe('Loading bay');
    const renamed = await t.call('PUT', `/api/task/${taskId}`, { json: { name: 'Dock 2' } });
    expect(renamed.body.code, renamed.body.msg).toBe(0);
    const listed = (await t.call('GET', '/api/tasks')).body.data as TaskView[];
    expect(listed.find((task) => task.task_id === taskId)).toMatchObject({
      name: 'Dock 2',
      device_id: 'cam-3',
      app_ids: ['motion'],
    });
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 60_000);

  it('names a task without one by its device id', async () => {
    const started = await start({ device_id: 'north-gate' });
    expect((await view((started.body.data as TaskView).task_id)).name).toBe('north-gate');
    await t.call('DELETE', `/api/task/${(started.body.data as TaskView).task_id}`);
  }, 60_000);

  it('refuses a blank, over-long or control-character name, naming the field, and starts nothing', async () => {
    const before = ((await t.call('GET', '/api/tasks')).body.data as TaskView[]).length;
    for (const name of ['   ', 'x'.repeat(65), 'line\nbreak', '']) {
      const answer = await start({ name });
      expect(answer.status, JSON.stringify(name)).toBe(400);
      expect(answer.body).toMatchObject({ code: 40001, field: 'name' });
    }
    expect(((await t.call('GET', '/api/tasks')).body.data as TaskView[]).length).toBe(before);
  });
});
