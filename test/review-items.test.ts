import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  AlarmPage,
  IgnoreResult,
  ReviewCounts,
  ReviewItemDetail,
  ReviewItemPage,
  TaskView,
  Timeline,
} from '../engine/contract';
import type { NewEvent } from '../engine/events/schema';
import { startMotionTask, startTestEngine, type TestEngine, taskView } from './helpers/engine';
import { message } from './helpers/receiver';
import { storeAlarms } from './helpers/stored-alarms';

/**
 * Review items over real HTTP (issue 35): 1,000 alarms stored through the real outbox before the
 * engine starts (each its own track: 1,000 items), marked reviewed in one call; filters, paging while
 * alarms arrive, refusals, authentication on every route, and "ignore this object here" proposed and
 * applied to a real video task.
 */

const DOOR = 'door';
let t: TestEngine;
let camera: string;

const get = async <T>(path: string) => {
  const answer = await t.call('GET', path);
  expect(answer.body.code, `${path}: ${answer.body.msg}`).toBe(0);
  return answer.body.data as T;
};
const items = (query: string) => get<ReviewItemPage>(`/api/review/items${query}`);
const counts = () => get<ReviewCounts>('/api/review/counts');
const alarms = (query: string) => get<AlarmPage>(`/api/alarms${query}`);

/** Every item id of a filter, newest first, read page by page. */
async function allIds(query: string): Promise<string[]> {
  const ids: string[] = [];
  let before: number | null = null;
  do {
    const page: ReviewItemPage = await items(`${query}&limit=200${before ? `&before=${before}` : ''}`);
    ids.push(...page.items.map((item) => item.item_id));
    before = page.next_before;
  } while (before !== null);
  return ids;
}

/** Stores an alarm of the camera through the engine's outbox: one object of a track, a box, a time. */
function alarmOf(
  taskId: string,
  track: string,
  box: { x: number; y: number; w: number; h: number },
  at = Date.now(),
  appId = 'motion',
): string {
  const base = message(taskId, 1, 8, appId);
  const event = {
    ...base,
    timestamp: at,
    data: {
      ...base.data,
      rules: [
        {
          id: `${appId}:0`,
          class_id: '0',
          image: '',
          objects: [{ track_id: track, ...box, score: 0.8, class_id: '0', name: 'motion' }],
        },
      ],
    },
  } as NewEvent;
  return t.engine.outbox.enqueue({ task_id: taskId, report_url: '' }, event).event_id;
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vc-review-items-'));
  storeAlarms(dir, DOOR, 1000);
  t = await startTestEngine(dir);
  // A camera whose own motion alarms cannot fire (a 4 px region): only the test's alarms are its.
  const started = await startMotionTask(t, {
    app_configs: [
      {
        app_id: 'motion',
        polygon: [
          [0, 0],
          [4, 0],
          [4, 4],
        ],
      },
    ],
  });
  expect(started.body.code, started.body.msg).toBe(0);
  camera = (started.body.data as { task_id: string }).task_id;
}, 120_000);

afterAll(async () => t?.stop());

describe('1,000 items', () => {
  it('are marked reviewed in one call, their alarms with them; counts and alarms agree', async () => {
    expect((await counts()).by_task[DOOR]).toEqual({ total: 1000, unreviewed: 1000 });
    const ids = await allIds(`?task_id=${DOOR}`);
    expect(new Set(ids).size).toBe(1000);

    const marked = await t.call('POST', '/api/review/items/review', {
      json: { item_ids: ids, reviewed: true },
    });
    expect(marked.body).toMatchObject({ code: 0, data: { updated: 1000 } });
    expect((await counts()).by_task[DOOR]).toEqual({ total: 1000, unreviewed: 0 });
    expect((await alarms(`?task_id=${DOOR}&reviewed=false`)).total).toBe(0);
    expect((await alarms(`?task_id=${DOOR}&reviewed=true`)).total).toBe(1000);
    expect((await items(`?task_id=${DOOR}&reviewed=true`)).total).toBe(1000);

    // "All shown": every item the filter matches, without listing them.
    const unmarked = await t.call('POST', '/api/review/items/review', {
      json: { filter: { task_id: DOOR }, reviewed: false },
    });
    expect(unmarked.body).toMatchObject({ code: 0, data: { updated: 1000 } });
    expect((await counts()).by_task[DOOR]).toEqual({ total: 1000, unreviewed: 1000 });
    expect((await alarms(`?task_id=${DOOR}&reviewed=false`)).total).toBe(1000);
  }, 60_000);
});

describe('one item', () => {
  it('lists its alarms oldest first, with what review shows of it', async () => {
    const now = Date.now();
    const first = alarmOf(camera, 'visit-1', { x: 100, y: 200, w: 40, h: 80 }, now);
    const second = alarmOf(camera, 'visit-1', { x: 120, y: 200, w: 40, h: 80 }, now + 5000);
    const page = await items(`?task_id=${camera}`);
    expect(page.total).toBe(1);
    const item = await get<ReviewItemDetail>(`/api/review/items/${page.items[0]?.item_id}`);
    expect(item).toEqual({
      item_id: page.items[0]?.item_id,
      task_id: camera,
      task_name: 'vtest.avi',
      track_id: 'visit-1',
      apps: ['motion'],
      rules: ['motion:0'],
      classes: ['0'],
      start: now,
      end: now + 5000,
      alarm_count: 2,
      peak_score: 0.8,
      best_event_id: first,
      first_event_id: first,
      thumbnail_url: null,
      // The first alarm's clip (a video task's alarm: clips are on).
      clip: expect.objectContaining({ event_id: first, task_id: camera }),
      reviewed_at: null,
      alarms: [
        expect.objectContaining({ event_id: first, task_id: camera }),
        expect.objectContaining({ event_id: second, task_id: camera }),
      ],
      more: false,
    });
  });

  it('is reviewed once all its alarms are marked one by one (PUT /api/alarms/review)', async () => {
    const [item] = (await items(`?task_id=${camera}`)).items;
    const detail = await get<ReviewItemDetail>(`/api/review/items/${item?.item_id}`);
    const mark = (ids: string[]) =>
      t.call('PUT', '/api/alarms/review', { json: { event_ids: ids, reviewed: true } });
    await mark([detail.alarms[0]?.event_id ?? '']);
    expect((await get<ReviewItemDetail>(`/api/review/items/${item?.item_id}`)).reviewed_at).toBeNull();
    await mark(detail.alarms.map((alarm) => alarm.event_id));
    expect((await get<ReviewItemDetail>(`/api/review/items/${item?.item_id}`)).reviewed_at).toEqual(
      expect.any(Number),
    );
  });
});

describe('filters and paging', () => {
  it('narrows by camera, app, class, score, reviewed and start time', async () => {
    expect((await items(`?task_id=${DOOR}&app_id=person`)).total).toBe(1000);
    expect((await items(`?task_id=${DOOR}&app_id=motion`)).total).toBe(0);
    expect((await items(`?task_id=${DOOR}&class_id=0`)).total).toBe(1000);
    expect((await items(`?task_id=${DOOR}&class_id=1`)).total).toBe(0);
    expect((await items(`?task_id=${DOOR}&min_score=0.9`)).total).toBe(1000);
    expect((await items(`?task_id=${DOOR}&min_score=0.95`)).total).toBe(0);
    expect((await items(`?task_id=${camera}&reviewed=true`)).total).toBe(1);
    expect((await items(`?task_id=${camera}&reviewed=false`)).total).toBe(0);
    const [newest] = (await items(`?task_id=${DOOR}&limit=1`)).items;
    const start = newest?.start ?? 0;
    expect((await items(`?task_id=${DOOR}&since=${start + 1}`)).total).toBe(0);
    expect((await items(`?task_id=${DOOR}&until=${start + 1}`)).total).toBe(1000);
    expect((await items(`?task_id=${DOOR}&until=${start}`)).total).toBeLessThan(1000);
  });

  it('a page boundary never moves when new alarms arrive', async () => {
    const whole = await allIds(`?task_id=${DOOR}`);
    const first = await items(`?task_id=${DOOR}&limit=10`);
    expect(first.items.map((item) => item.item_id)).toEqual(whole.slice(0, 10));
    for (let i = 0; i < 5; i++)
      t.engine.outbox.enqueue({ task_id: DOOR, report_url: '' }, message(DOOR, 5000 + i));
    const second = await items(`?task_id=${DOOR}&limit=10&before=${first.next_before}`);
    expect(second.items.map((item) => item.item_id)).toEqual(whole.slice(10, 20));
    expect(second.total).toBe(1005);
  });
});

describe('timeline and counts', () => {
  it("lists a camera's items over a span, oldest first", async () => {
    const now = Date.now();
    const timeline = await get<Timeline>(
      `/api/review/timeline?task_id=${camera}&since=${now - 3600_000}&until=${now + 3600_000}`,
    );
    expect(timeline.truncated).toBe(false);
    expect(timeline.items).toEqual([
      {
        item_id: expect.any(String),
        start: expect.any(Number),
        end: expect.any(Number),
        peak_score: 0.8,
        classes: ['0'],
        reviewed: true,
      },
    ]);
    const before = await get<Timeline>(`/api/review/timeline?task_id=${camera}&since=0&until=1000`);
    expect(before.items).toEqual([]);
  });
});

describe('refusals', () => {
  const cases: Array<[string, string, unknown?]> = [
    ['GET', '/api/review/items?limit=0'],
    ['GET', '/api/review/items?limit=201'],
    ['GET', '/api/review/items?min_score=2'],
    ['GET', '/api/review/items?since=yesterday'],
    ['GET', '/api/review/items?colour=red'],
    ['POST', '/api/review/items/review', { item_ids: [], reviewed: true }],
    [
      'POST',
      '/api/review/items/review',
      { item_ids: Array.from({ length: 1001 }, (_, i) => `i${i}`), reviewed: true },
    ],
    ['POST', '/api/review/items/review', { item_ids: ['a', 'a'], reviewed: true }],
    ['POST', '/api/review/items/review', { item_ids: ['a'] }],
    ['POST', '/api/review/items/review', { item_ids: ['a'], filter: {}, reviewed: true }],
    ['POST', '/api/review/items/review', { filter: { task_id: DOOR, colour: 'red' }, reviewed: true }],
    ['POST', '/api/review/items/review', { filter: { task_id: DOOR }, reviewed: 'yes' }],
    ['GET', '/api/review/timeline?since=0&until=1000'],
    ['GET', `/api/review/timeline?task_id=${DOOR}&since=0&until=${8 * 86_400_000}`],
    ['GET', `/api/review/timeline?task_id=${DOOR}&since=1000&until=1000`],
    ['GET', '/api/review/counts?since=-1'],
  ];

  it.each(cases)('%s %s → 40001 envelope, nothing changed', async (method, path, json) => {
    const before = await counts();
    const answer = await t.call(method, path, json === undefined ? {} : { json });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 40001, msg: expect.any(String) });
    expect(await counts()).toEqual(before);
  });

  it('the bulk path is no item: another method there is 405, allowing POST', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const answer = await t.call(method, '/api/review/items/review');
      expect([method, answer.status, answer.body.code, answer.headers.get('allow')]).toEqual([
        method,
        405,
        40501,
        'POST',
      ]);
    }
  });

  it('an unknown item → 40412', async () => {
    for (const [method, path, json] of [
      ['GET', '/api/review/items/nope', undefined],
      ['POST', '/api/review/items/nope/ignore', { kind: 'class', apply: false }],
    ] as const) {
      const answer = await t.call(method, path, json ? { json } : {});
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ code: 40412, msg: expect.stringContaining('nope') });
    }
  });

  it('every route asks for a token, and refuses a forged one', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/api/review/items'],
      ['GET', '/api/review/items/x'],
      ['POST', '/api/review/items/review', { item_ids: ['x'], reviewed: true }],
      ['POST', '/api/review/items/x/ignore', { kind: 'class', apply: true }],
      ['GET', `/api/review/timeline?task_id=${DOOR}&since=0&until=1000`],
      ['GET', '/api/review/counts'],
    ];
    for (const [method, path, json] of routes) {
      const body = json === undefined ? {} : { json };
      const none = await t.call(method, path, { ...body, token: null });
      expect([path, none.status, none.body.code]).toEqual([path, 401, 40101]);
      const forged = await t.call(method, path, { ...body, token: 'A'.repeat(43) });
      expect([path, forged.status, forged.body.code]).toEqual([path, 401, 40102]);
    }
  });
});

describe('ignore this object here', () => {
  let itemId: string;

  beforeAll(async () => {
    const now = Date.now() + 3600_000;
    alarmOf(camera, 'cart', { x: 300, y: 300, w: 40, h: 60 }, now);
    alarmOf(camera, 'cart', { x: 340, y: 310, w: 40, h: 60 }, now + 1000);
    itemId = (await items(`?task_id=${camera}&limit=1`)).items[0]?.item_id ?? '';
  });

  const ignore = (id: string, json: unknown) => t.call('POST', `/api/review/items/${id}/ignore`, { json });

  it('class: proposes the camera override of the apps that fired; apply changes the task', async () => {
    const proposed = await ignore(itemId, { kind: 'class', apply: false });
    expect(proposed.body.code, proposed.body.msg).toBe(0);
    const override = { classes: [{ class_id: '0', threshold: 1, min_pixel: 1_000_000 }] };
    expect(proposed.body.data).toEqual({
      proposal: {
        kind: 'class',
        task_id: camera,
        apps: ['motion'],
        classes: ['0'],
        mask: null,
        frame_fraction: null,
        request: {
          method: 'PUT',
          path: `/api/task/${camera}`,
          body: { rule_overrides: { motion: override } },
        },
      },
      applied: false,
    } satisfies IgnoreResult);
    expect((await taskView(t, camera)).rule_overrides).toEqual({});

    const applied = await ignore(itemId, { kind: 'class', apply: true });
    expect(applied.body).toMatchObject({ code: 0, data: { applied: true } });
    expect((await taskView(t, camera)).rule_overrides).toEqual({ motion: override });
    // Undone by removing the override.
    await t.call('PUT', `/api/task/${camera}`, { json: { rule_overrides: { motion: null } } });
    expect((await taskView(t, camera)).rule_overrides).toEqual({});
  });

  it("mask: a padded box around the object's stored boxes, added to the app's masks", async () => {
    const proposed = await ignore(itemId, { kind: 'mask', apply: false });
    expect(proposed.body.code, proposed.body.msg).toBe(0);
    // Boxes 280..320 x 270..330 and 320..360 x 280..340: 280..360 x 270..340, padded 10% (8 px, 7 px).
    const mask = [
      [272, 263],
      [368, 263],
      [368, 347],
      [272, 347],
    ];
    const result = proposed.body.data as IgnoreResult;
    expect(result.proposal).toMatchObject({ kind: 'mask', apps: ['motion'], mask, frame_fraction: 0.018 });
    expect((await taskView(t, camera)).app_configs[0]?.masks).toBeUndefined();

    const applied = await ignore(itemId, { kind: 'mask', apply: true });
    expect(applied.body).toMatchObject({ code: 0, data: { applied: true } });
    const view: TaskView = await taskView(t, camera);
    expect(view.app_configs).toEqual([
      {
        app_id: 'motion',
        polygon: [
          [0, 0],
          [4, 0],
          [4, 4],
        ],
        masks: [mask],
      },
    ]);
  });

  it('refuses (40001) a mask over half the frame, proposed or applied, and changes nothing', async () => {
    alarmOf(camera, 'bus', { x: 384, y: 288, w: 600, h: 400 }, Date.now() + 7200_000);
    const big = (await items(`?task_id=${camera}&limit=1`)).items[0]?.item_id ?? '';
    const areas = async () => {
      const { app_configs, rule_overrides } = await taskView(t, camera);
      return { app_configs, rule_overrides };
    };
    const before = await areas();
    for (const apply of [false, true]) {
      const answer = await ignore(big, { kind: 'mask', apply });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 40001, msg: expect.stringContaining('% of the frame') });
    }
    expect(await areas()).toEqual(before);
  });
});
