import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
