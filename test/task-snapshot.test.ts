import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { linkFor, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';

/** GET /api/task/:id/snapshot: the small pictures a wall of cameras refreshes. */

let t: TestEngine;
let taskId: string;

beforeAll(async () => {
  t = await startTestEngine();
  const started = await t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO },
  });
  taskId = (started.body.data as { task_id: string }).task_id;
});

afterAll(async () => t?.stop());

const snapshot = (path: string, headers: Record<string, string> = { authorization: `Bearer ${t.token}` }) =>
  fetch(`${t.engine.url}${path}`, { headers });

describe('a running camera’s snapshot', () => {
  it('is a JPEG of the source frame at the asked width, its aspect kept', async () => {
    const answer = await snapshot(`/api/task/${taskId}/snapshot?width=200`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('image/jpeg');
    const meta = await sharp(Buffer.from(await answer.arrayBuffer())).metadata();
    // vtest.avi is 768x576.
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 200, 150]);
  });

  it('is 320 px wide by default, and takes a link token in the query for an <img>', async () => {
    const answer = await snapshot(await linkFor(t, `/api/task/${taskId}/snapshot`), {});
    expect(answer.status).toBe(200);
    expect((await sharp(Buffer.from(await answer.arrayBuffer())).metadata()).width).toBe(320);
    expect((await snapshot(`/api/task/${taskId}/snapshot`, {})).status).toBe(401);
  });

  it('refuses a width out of bounds, an image task and a closed task, as envelopes', async () => {
    const tooSmall = await snapshot(`/api/task/${taskId}/snapshot?width=10`);
    expect(tooSmall.status).toBe(400);
    expect(await tooSmall.json()).toMatchObject({ code: 40001 });
    const images = await t.call('POST', '/api/task', {
      json: { mode: 'diff', zapk_id: 'builtin', app_ids: ['change'] },
    });
    const imageTask = (images.body.data as { task_id: string }).task_id;
    const wrongMode = await snapshot(`/api/task/${imageTask}/snapshot`);
    expect(((await wrongMode.json()) as { code: number }).code).toBe(40903);
    await t.call('DELETE', `/api/task/${taskId}`);
    const closed = await snapshot(`/api/task/${taskId}/snapshot`);
    expect(closed.status).not.toBe(200);
    expect(await closed.json()).toMatchObject({
      code: expect.any(Number),
      msg: expect.stringContaining(taskId),
    });
  });
});

describe('a camera analysed once in 10 s (analysis_fps 0.1)', () => {
  it('has a snapshot and a heatmap: the next analysed frame at first, then its latest frame at once', async () => {
    const started = await t.call('POST', '/api/task', {
      json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO, analysis_fps: 0.1 },
    });
    expect(started.body.code, started.body.msg).toBe(0);
    const slowId = (started.body.data as { task_id: string }).task_id;
    const analysed = async () =>
      ((await t.call('GET', `/api/task/${slowId}`)).body.data as TaskView).health.frames_analysed;
    // Nothing kept yet: the first ask waits for the task's next frame (up to 10 s + 5 s here).
    const first = await snapshot(`/api/task/${slowId}/snapshot?width=200`);
    expect(first.status).toBe(200);
    expect((await sharp(Buffer.from(await first.arrayBuffer())).metadata()).width).toBe(200);
    // From then on its latest frame is recent for a task of this rate: no wait for another one.
    const frames = await analysed();
    const again = await snapshot(`/api/task/${slowId}/snapshot?width=320`);
    const heatmap = await snapshot(`/api/task/${slowId}/heatmap?width=320`);
    expect([again.status, again.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
    expect([heatmap.status, heatmap.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect((await sharp(Buffer.from(await heatmap.arrayBuffer())).metadata()).width).toBe(320);
    expect(await analysed()).toBe(frames);
    await t.call('DELETE', `/api/task/${slowId}`);
  }, 60_000);
});
