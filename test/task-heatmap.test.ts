import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkFor, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';

/**
 * GET and DELETE /api/task/:id/heatmap on the fixture video with the built-in motion app: where the
 * walkers' foot points were, drawn over the next frame. The drawing itself is checked in heatmap.test.ts.
 */

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

const get = (path: string, headers: Record<string, string> = { authorization: `Bearer ${t.token}` }) =>
  fetch(`${t.engine.url}${path}`, { headers });

/** RGB pixels of a picture answer. */
async function pixels(answer: Response) {
  const { data, info } = await sharp(Buffer.from(await answer.arrayBuffer()))
    .raw()
    .toBuffer({ resolveWithObject: true });
  return (x: number, y: number) => {
    const i = (Math.round(y) * info.width + Math.round(x)) * info.channels;
    return [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0] as const;
  };
}

async function heatGrid() {
  const answer = await t.call('GET', `/api/task/${taskId}/heatmap/grid`);
  return answer.body.data as { columns: number; rows: number; cells: number[] };
}

describe('a running camera’s heatmap', () => {
  it('is a PNG of the next frame 640 px wide by default, red where objects stood most', async () => {
    // Five seconds of walkers.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const { cells, columns } = await heatGrid();
    const answer = await get(`/api/task/${taskId}/heatmap`);
    const plain = await pixels(await get(`/api/task/${taskId}/snapshot?width=640`));
    expect([answer.status, answer.headers.get('content-type'), answer.headers.get('cache-control')]).toEqual([
      200,
      'image/png',
      'no-store',
    ]);
    const png = Buffer.from(await answer.clone().arrayBuffer());
    const meta = await sharp(png).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 640, 480]);

    // A cell is 10 x 10 pixels at 640 x 480: the hottest one's centre is tinted red; the top left
    // corner (sky over the walkway's end, no walker there in the first seconds) is the frame as it is.
    const hottest = cells.indexOf(Math.max(...cells));
    expect(cells[hottest]).toBeGreaterThan(0);
    const heat = await pixels(answer);
    const [r, g, b] = heat((hottest % columns) * 10 + 5, Math.floor(hottest / columns) * 10 + 5);
    expect(cells.slice(0, 3)).toEqual([0, 0, 0]);
    const corner = heat(5, 5).map((v, c) => Math.abs(v - (plain(5, 5)[c] ?? 0)) <= 12);
    expect([r - Math.max(g, b) > 60, corner]).toEqual([true, [true, true, true]]);
  }, 30_000);

  it('takes a width and a link token in the query for an <img>, and refuses no token', async () => {
    const answer = await get(await linkFor(t, `/api/task/${taskId}/heatmap?width=200`), {});
    expect(answer.status).toBe(200);
    const meta = await sharp(Buffer.from(await answer.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([200, 150]);
    expect((await get(`/api/task/${taskId}/heatmap`, {})).status).toBe(401);
  });

  it('answers the counts per cell, and starts again on DELETE', async () => {
    const grid = async () => {
      const answer = await t.call('GET', `/api/task/${taskId}/heatmap/grid`);
      const data = answer.body.data as { columns: number; rows: number; cells: number[] };
      return {
        shape: [data.columns, data.rows, data.cells.length],
        sum: data.cells.reduce((a, b) => a + b, 0),
      };
    };
    const before = await grid();
    expect(before.shape).toEqual([64, 48, 64 * 48]);
    const reset = await t.call('DELETE', `/api/task/${taskId}/heatmap`);
    expect(reset.body).toEqual({ code: 0, msg: 'success', data: { task_id: taskId } });
    const after = await grid();
    // Five seconds of walkers before; at most the frame or two analysed since the reset after.
    expect(after.sum).toBeLessThan(before.sum / 5);
    expect((await t.call('DELETE', `/api/task/${taskId}/heatmap`, { token: null })).status).toBe(401);
    expect((await t.call('GET', `/api/task/${taskId}/heatmap/grid`, { token: null })).status).toBe(401);
  });

  it('refuses an image task and a closed task, as envelopes', async () => {
    const images = await t.call('POST', '/api/task', {
      json: { mode: 'diff', zapk_id: 'builtin', app_ids: ['change'] },
    });
    const imageTask = (images.body.data as { task_id: string }).task_id;
    expect(await (await get(`/api/task/${imageTask}/heatmap`)).json()).toMatchObject({ code: 40903 });
    expect((await t.call('DELETE', `/api/task/${imageTask}/heatmap`)).body).toMatchObject({ code: 40903 });
    await t.call('DELETE', `/api/task/${taskId}`);
    expect(await (await get(`/api/task/${taskId}/heatmap`)).json()).toMatchObject({ code: 40902 });
  });
});
