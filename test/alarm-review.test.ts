import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlarmFacets, AlarmPage } from '../engine/contract';
import { readZip } from './helpers/coco';
import { linkFor, startTestEngine, type TestEngine } from './helpers/engine';
import { installExamplePackage } from './helpers/example-package';
import { FIXTURES } from './helpers/fixtures';

/**
 * Alarm review over real HTTP: alarms made by real image tasks (basketball1.png, 640x480: the
 * example model finds two persons, scores about 0.88 and 0.82), filtered, paged while more arrive,
 * marked reviewed, with their pictures and export.
 */

const BASKETBALL = new Uint8Array(readFileSync(join(FIXTURES, 'media', 'basketball1.png')));
let t: TestEngine;
let first: string;
let second: string;

async function imageTask(): Promise<string> {
  const answer = await t.call('POST', '/api/task', {
    json: { mode: 'image', zapk_id: 'coco-yolox-nano', app_ids: ['person'] },
  });
  return (answer.body.data as { task_id: string }).task_id;
}

async function upload(taskId: string): Promise<void> {
  // The person rule alarms at most every 5 s of the engine's clock (its interval).
  t.advance(6000);
  const answer = await t.call('POST', `/api/task/${taskId}/image`, {
    raw: { type: 'image/png', body: BASKETBALL },
  });
  expect(answer.body.code, answer.body.msg).toBe(0);
}

const alarms = async (query = '') => (await t.call('GET', `/api/alarms${query}`)).body.data as AlarmPage;

beforeAll(async () => {
  t = await startTestEngine();
  expect(await installExamplePackage(t)).toBe(200);
  first = await imageTask();
  second = await imageTask();
  for (const taskId of [first, first, first, second]) await upload(taskId);
}, 120_000);

afterAll(async () => t?.stop());

describe('stored alarms, filtered', () => {
  it('lists every alarm newest first with what review filters by', async () => {
    const page = await alarms();
    expect(page.total).toBe(4);
    expect(page.next_before).toBeNull();
    expect(page.items.map((item) => [item.task_id, item.seq])).toEqual([
      [second, 1],
      [first, 3],
      [first, 2],
      [first, 1],
    ]);
    expect(page.items[0]).toEqual({
      event_id: expect.any(String),
      task_id: second,
      seq: 1,
      app_id: 'person',
      timestamp: expect.any(Number),
      rules: ['person:0'],
      classes: ['0'],
      max_score: expect.closeTo(0.88, 1),
      reviewed_at: null,
      has_image: true,
      thumbnail_url: `/api/alarms/${page.items[0]?.event_id}/thumbnail`,
      state: 'no_receiver',
      attempts: 0,
      // Stored for a task that runs no video here: no clip.
      clip: null,
    });
  });

  it('narrows by camera, rule, class, score and time', async () => {
    expect((await alarms(`?task_id=${second}`)).total).toBe(1);
    expect((await alarms('?rule=person:0&class_id=0')).total).toBe(4);
    expect((await alarms('?class_id=2')).total).toBe(0);
    // LIKE's wildcards are literal characters in a filter.
    expect((await alarms('?rule=%25')).total).toBe(0);
    expect((await alarms('?min_score=0.5')).total).toBe(4);
    expect((await alarms('?min_score=0.95')).total).toBe(0);
    const newest = (await alarms()).items[0]?.timestamp ?? 0;
    expect((await alarms(`?since=${newest + 1}`)).total).toBe(0);
    expect((await alarms(`?until=${newest + 1}`)).total).toBe(4);
    const facets = (await t.call('GET', '/api/alarms/facets')).body.data as AlarmFacets;
    expect(facets).toEqual({
      tasks: [first, second].sort(),
      apps: ['person'],
      rules: ['person:0'],
      classes: ['0'],
    });
  });

  it('pages through the history, a page boundary not moving when alarms arrive', async () => {
    const one = await alarms('?limit=3');
    expect(one.items).toHaveLength(3);
    await upload(second);
    const two = await alarms(`?limit=3&before=${one.next_before}`);
    expect(two.items.map((item) => [item.task_id, item.seq])).toEqual([[first, 1]]);
    expect(two.next_before).toBeNull();
    expect(two.total).toBe(5);
  });

  it('keeps the reviewed state on the server, and filters by it', async () => {
    const ids = (await alarms(`?task_id=${first}`)).items.map((item) => item.event_id);
    const answer = await t.call('PUT', '/api/alarms/review', {
      json: { event_ids: [ids[0], ids[1], 'no-such-event'], reviewed: true },
    });
    expect(answer.body.data).toEqual({ updated: 2 });
    expect((await alarms('?reviewed=true')).items.map((item) => item.event_id)).toEqual([ids[0], ids[1]]);
    expect((await alarms('?reviewed=false')).total).toBe(3);
    await t.call('PUT', '/api/alarms/review', { json: { event_ids: [ids[0]], reviewed: false } });
    expect((await alarms('?reviewed=true')).total).toBe(1);
    const tooMany = await t.call('PUT', '/api/alarms/review', {
      json: { event_ids: Array.from({ length: 501 }, (_, i) => `e${i}`), reviewed: true },
    });
    expect(tooMany.status).toBe(400);
  });
});

describe('an alarm’s pictures and export', () => {
  const get = (path: string, headers: Record<string, string> = { authorization: `Bearer ${t.token}` }) =>
    fetch(`${t.engine.url}${path}`, { headers });

  it('has a 320 px thumbnail (a link token in the query too) and its whole snapshot', async () => {
    const eventId = (await alarms()).items[0]?.event_id;
    const thumb = await get(await linkFor(t, `/api/alarms/${eventId}/thumbnail`), {});
    expect(thumb.status).toBe(200);
    const small = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    expect([small.format, small.width, small.height]).toEqual(['jpeg', 320, 240]);
    const whole = await sharp(
      Buffer.from(await (await get(`/api/alarms/${eventId}/snapshot`)).arrayBuffer()),
    ).metadata();
    expect([whole.width, whole.height]).toEqual([640, 480]);
    expect((await get(`/api/alarms/${eventId}/thumbnail`, {})).status).toBe(401);
    const missing = await get('/api/alarms/no-such-event/thumbnail');
    expect([missing.status, ((await missing.json()) as { code: number }).code]).toEqual([404, 40407]);
    expect((await get(`/api/alarms/${eventId}/snapshot?rule=5`)).status).toBe(404);
  });

  it('exports one alarm as its JSON and snapshot', async () => {
    const item = (await alarms()).items[0];
    const answer = await get(`/api/alarms/${item?.event_id}/export`);
    expect(answer.headers.get('content-type')).toBe('application/zip');
    const files = await readZip(Buffer.from(await answer.arrayBuffer()));
    expect([...files.keys()].sort()).toEqual(['alarm.json', 'snapshot-0.jpg']);
    const json = JSON.parse(String(files.get('alarm.json'))) as {
      alarm: { event_id: string };
      callback: { data: { rules: Array<{ image: string; objects: unknown[] }> } };
    };
    expect(json.alarm.event_id).toBe(item?.event_id);
    expect(json.callback.data.rules[0]?.image).toBe('snapshot-0.jpg');
    expect(json.callback.data.rules[0]?.objects).toHaveLength(2);
    expect((await sharp(files.get('snapshot-0.jpg') as Buffer).metadata()).width).toBe(640);
  });
});
