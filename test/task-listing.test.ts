import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../engine/contract/errors';
import { TASK_AREA_LIMITS, TASK_PAGE_LIMIT } from '../engine/tasks/limits';
import type { AppConfig, TaskView } from '../engine/tasks/schema';
import { type Answer, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { bodyBytes, circle, heaviestImageTask, issueVideoTask } from './helpers/heavy-task';
import { Receiver } from './helpers/receiver';

/**
 * Issue 31, item 1, over real HTTP: what one task may carry (TASK_AREA_LIMITS), the listing paged and
 * filtered by query parameters with its areas only on request, and the purge of a closed task.
 */

let t: TestEngine;

beforeAll(async () => {
  t = await startTestEngine();
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

function expectOk(answer: Answer): unknown {
  expect(answer.body.msg, JSON.stringify(answer.body)).toBe('success');
  expect(answer.status).toBe(200);
  return answer.body.data;
}

function expectError(answer: Answer, kind: keyof typeof ERRORS, msg?: RegExp, field?: string) {
  expect({ status: answer.status, code: answer.body.code }).toEqual({
    status: ERRORS[kind].status,
    code: ERRORS[kind].code,
  });
  expect(answer.body).not.toHaveProperty('data');
  if (msg) expect(answer.body.msg).toMatch(msg);
  if (field) expect(answer.body.field).toBe(field);
}

const imageTask = (extra: Record<string, unknown> = {}) => ({
  mode: 'image',
  zapk_id: 'builtin',
  app_ids: ['motion'],
  ...extra,
});

/** Starts a task, then moves the clock on: tasks started in one millisecond list in task_id order. */
async function start(body: Record<string, unknown>): Promise<string> {
  const started = expectOk(await t.call('POST', '/api/task', { json: body })) as { task_id: string };
  t.clock.advance(1);
  return started.task_id;
}

const total = async (query = '') =>
  Number((await t.call('GET', `/api/tasks${query}`)).headers.get('x-total-count'));

/** `count` regions of `points` integer points each, as one app's polygon, zones and masks. */
function regions(count: number, points: number): AppConfig {
  const at = (i: number) => circle(1000 + (i % 10) * 1200, 1000 + Math.floor(i / 10) * 1200, 500, points, 0);
  const zones = Math.min(TASK_AREA_LIMITS.zonesPerApp, count - 1);
  return {
    app_id: 'motion',
    polygon: at(0),
    zones: Array.from({ length: zones }, (_, i) => ({ name: `z${i}`, polygon: at(i + 1) })),
    masks: Array.from({ length: count - 1 - zones }, (_, i) => at(zones + 1 + i)),
  };
}

describe('what a task may carry', () => {
  it('takes the heaviest body the bounds allow and stores its areas as sent', async () => {
    const body = heaviestImageTask();
    expect(bodyBytes(body)).toBeGreaterThan(TASK_AREA_LIMITS.bodyBytes - 4096);
    const taskId = await start(body);
    const task = expectOk(await t.call('GET', `/api/task/${taskId}`)) as TaskView;
    expect(task.app_configs).toEqual(body.app_configs);
    const points = task.app_configs.flatMap((c) => [
      c.polygon,
      ...(c.zones ?? []).map((z) => z.polygon),
      ...(c.masks ?? []),
    ]);
    expect(points.reduce((sum, polygon) => sum + polygon.length, 0)).toBe(TASK_AREA_LIMITS.pointsPerTask);
  });

  it("refuses a body over 64 KiB with 413, the issue's 790 KB one included, and starts nothing", async () => {
    const before = await total();
    const issue = issueVideoTask(VIDEO);
    expect(bodyBytes(issue)).toBeGreaterThan(790_000);
    expectError(await t.call('POST', '/api/task', { json: issue }), 'BODY_TOO_LARGE', /64 KiB/);
    // One byte over: the name of the heaviest body padded into a field the schema ignores, so that
    // only its size decides.
    const heavy = heaviestImageTask();
    const over = {
      ...heavy,
      business_id: `${'b'.repeat(256 + TASK_AREA_LIMITS.bodyBytes - bodyBytes(heavy) + 1)}`,
    };
    expect(bodyBytes(over)).toBe(TASK_AREA_LIMITS.bodyBytes + 1);
    expectError(await t.call('POST', '/api/task', { json: over }), 'BODY_TOO_LARGE', /64 KiB/);
    expect(await total()).toBe(before);
  });

  it('refuses more points or polygons in all than a task carries, naming app_configs, and starts nothing', async () => {
    const before = await total();
    const { pointsPerTask, pointsPerPolygon, polygonsPerTask } = TASK_AREA_LIMITS;
    // Nine regions of 228 points: each under the 256 of a polygon, 2052 in all.
    const tooManyPoints = regions(9, 228);
    expect(9 * 228).toBeGreaterThan(pointsPerTask);
    expectError(
      await t.call('POST', '/api/task', { json: imageTask({ app_configs: [tooManyPoints] }) }),
      'INVALID_PARAMETER',
      new RegExp(`body\\.app_configs: .* 2052 points in all; a task carries at most ${pointsPerTask}`),
      'app_configs',
    );
    // Exactly the bound is fine.
    const atBound = await start(imageTask({ app_configs: [regions(8, pointsPerTask / 8)] }));
    expect(atBound).toBeTruthy();
    // Two apps of 65 triangles each (a video task: the check comes before the source opens).
    const triangles = { ...regions(65, 3), app_id: 'motion' };
    const video = {
      zapk_id: 'builtin',
      app_ids: ['motion', 'intrusion'],
      video_url: VIDEO,
      app_configs: [triangles, { ...triangles, app_id: 'intrusion' }],
    };
    expectError(
      await t.call('POST', '/api/task', { json: video }),
      'INVALID_PARAMETER',
      new RegExp(
        `the task would carry 130 polygons, zones and masks; a task carries at most ${polygonsPerTask}`,
      ),
      'app_configs',
    );
    // One polygon over its own bound is the schema's.
    const long = circle(2000, 2000, 1000, pointsPerPolygon + 1, 0);
    expectError(
      await t.call('POST', '/api/task', {
        json: imageTask({ app_configs: [{ app_id: 'motion', polygon: long }] }),
      }),
      'INVALID_PARAMETER',
      /must NOT have more than 256 items/,
      'app_configs[0].polygon',
    );
    expect(await total()).toBe(before + 1);
  });

  it('refuses an update that would take a task over its bounds, or over 64 KiB, and changes nothing', async () => {
    const taskId = await start(imageTask({ app_configs: [regions(4, 200)] }));
    const stored = expectOk(await t.call('GET', `/api/task/${taskId}`)) as TaskView;
    expectError(
      await t.call('PUT', `/api/task/${taskId}`, {
        json: { name: 'renamed', app_configs: [regions(11, 200)] },
      }),
      'INVALID_PARAMETER',
      /2200 points in all/,
      'app_configs',
    );
    const heavy = heaviestImageTask();
    expectError(
      await t.call('PUT', `/api/task/${taskId}`, {
        json: { name: 'renamed', app_configs: [heavy.app_configs, heavy.app_configs].flat() },
      }),
      'BODY_TOO_LARGE',
      /64 KiB/,
    );
    expect(expectOk(await t.call('GET', `/api/task/${taskId}`))).toEqual(stored);
  });
});

describe('the listing', () => {
  let ids: string[];
  let closed: string[];
  let diff: string;

  beforeAll(async () => {
    // Tasks other tests left are listed before these, oldest first.
    ids = [];
    for (let i = 0; i < 4; i++)
      ids.push(await start(imageTask({ name: `listed ${i}`, app_configs: [regions(2, 5)] })));
    diff = await start({ mode: 'diff', zapk_id: 'builtin', app_ids: ['change'] });
    ids.push(diff);
    closed = [ids[1] as string, ids[3] as string];
    for (const taskId of closed) expectOk(await t.call('DELETE', `/api/task/${taskId}`));
  });

  const listed = async (query = '') => expectOk(await t.call('GET', `/api/tasks${query}`)) as TaskView[];

  it('answers every task as before, oldest first, with the fields of 2.7 and the decided extensions but no areas', async () => {
    const all = await listed();
    const count = await total();
    expect(all).toHaveLength(count);
    expect(all.slice(-5).map((task) => task.task_id)).toEqual(ids);
    const createdAt = all.map((task) => task.created_at);
    expect(createdAt).toEqual([...createdAt].sort((a, b) => a - b));
    for (const task of all) {
      expect(Object.keys(task).sort()).toEqual(
        [
          'task_id',
          'mode',
          'zapk_id',
          'app_ids',
          'device_id',
          'business_id',
          'video_url',
          'analysis_url',
          'report_url',
          'osd',
          'close_code',
          'dump',
          'name',
          'analysis_fps',
          'priority',
          'gpu',
          'persistent',
          'motion_gate',
          'gate_regions',
          'rule_overrides',
          'health',
          'status',
          'created_at',
          'closed_at',
        ].sort(),
      );
      // The summary is the task's own answer, less its areas.
      const { app_configs: _areas, ...whole } = expectOk(
        await t.call('GET', `/api/task/${task.task_id}`),
      ) as TaskView;
      expect(task).toEqual(whole);
    }
    expect((await t.call('GET', '/api/tasks')).headers.get('link')).toBeNull();
  });

  it('carries each task as GET /api/task/{task_id} answers it with with_areas=true', async () => {
    const all = await listed('?with_areas=true');
    expect(all).toHaveLength(await total());
    for (const task of all) expect(task).toEqual(expectOk(await t.call('GET', `/api/task/${task.task_id}`)));
    // Twice: closed tasks come from what is kept serialized the second time.
    expect(await listed('?with_areas=true')).toEqual(all);
    expect(await listed('?with_areas=false')).toEqual(
      all.map(({ app_configs: _areas, ...summary }) => summary),
    );
  });

  it('pages by limit and offset, says how many match in X-Total-Count and links the next page', async () => {
    const all = await listed();
    const first = await t.call('GET', '/api/tasks?limit=2');
    expect(expectOk(first)).toEqual(all.slice(0, 2));
    expect(first.headers.get('x-total-count')).toBe(String(all.length));
    expect(first.headers.get('link')).toBe('</api/tasks?limit=2&offset=2>; rel="next"');
    // Following the links gives the whole listing once.
    const pages: TaskView[] = [];
    let next: string | null = '/api/tasks?limit=2&with_areas=false';
    while (next) {
      const page = await t.call('GET', next);
      pages.push(...(expectOk(page) as TaskView[]));
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1] ?? null;
    }
    expect(pages).toEqual(all);
    expect(await listed(`?offset=${all.length}`)).toEqual([]);
    expect((await t.call('GET', `/api/tasks?offset=${all.length - 1}`)).headers.get('link')).toBeNull();
  });

  it('filters by state (running: close_code 0) and mode, alone and together', async () => {
    const running = await listed('?state=running');
    expect(running.every((task) => task.close_code === 0)).toBe(true);
    expect(running.map((task) => task.task_id)).toEqual(expect.arrayContaining([ids[0], ids[2], diff]));
    expect(running.map((task) => task.task_id)).not.toEqual(expect.arrayContaining([closed[0]]));
    const closedNow = await listed('?state=closed');
    expect(closedNow.map((task) => task.task_id)).toEqual(closed);
    expect(closedNow.every((task) => task.status === 'closed' && task.close_code === 1)).toBe(true);
    expect((await listed('?mode=diff')).map((task) => task.task_id)).toEqual([diff]);
    expect((await listed('?mode=video')).map((task) => task.task_id)).toEqual([]);
    expect((await listed('?state=closed&mode=image&limit=1')).map((task) => task.task_id)).toEqual([
      closed[0],
    ]);
    const page = await t.call('GET', '/api/tasks?state=closed&mode=image&limit=1');
    expect(page.headers.get('x-total-count')).toBe('2');
    expect(page.headers.get('link')).toBe(
      '</api/tasks?state=closed&mode=image&limit=1&offset=1>; rel="next"',
    );
  });

  it('shows a task as it is now: closed after it closes, new areas after an update', async () => {
    const taskId = await start(imageTask({ app_configs: [regions(1, 4)] }));
    const find = async () => (await listed('?with_areas=true')).find((task) => task.task_id === taskId);
    expect(await find()).toMatchObject({ status: 'running' });
    const areas = [regions(2, 6)];
    expectOk(await t.call('PUT', `/api/task/${taskId}`, { json: { app_configs: areas } }));
    expect((await find())?.app_configs).toEqual(areas);
    expectOk(await t.call('DELETE', `/api/task/${taskId}`));
    expect(await find()).toMatchObject({ status: 'closed', close_code: 1, app_configs: areas });
  });

  it.each([
    ['limit=0', 'query.limit', /must be >= 1/],
    [`limit=${TASK_PAGE_LIMIT + 1}`, 'query.limit', new RegExp(`must be <= ${TASK_PAGE_LIMIT}`)],
    ['limit=two', 'query.limit', /must be integer/],
    ['offset=-1', 'query.offset', /must be >= 0/],
    ['state=open', 'query.state', /must be one of \["running","closed"\]/],
    ['mode=camera', 'query.mode', /must be one of/],
    ['with_areas=maybe', 'query.with_areas', /must be boolean/],
    ['page=2', 'query.page', /is not an allowed field/],
  ])('refuses ?%s naming the parameter', async (query, field, msg) => {
    const answer = await t.call('GET', `/api/tasks?${query}`);
    expectError(answer, 'INVALID_PARAMETER', msg);
    expect(answer.body.msg).toContain(field);
  });
});

describe('purging a closed task', () => {
  it('refuses to purge a running task, closes idempotently, then purges the closed one from listing and storage', async () => {
    const taskId = await start(imageTask());
    const count = await total();
    expectError(
      await t.call('DELETE', `/api/task/${taskId}?purge=true`),
      'TASK_NOT_CLOSED',
      /not closed: close it first/,
    );
    expect(expectOk(await t.call('GET', `/api/task/${taskId}`))).toMatchObject({ status: 'running' });
    expect(expectOk(await t.call('DELETE', `/api/task/${taskId}`))).toEqual({
      task_id: taskId,
      close_code: 1,
    });
    // Closing again answers the same, and purge=false is a close.
    expect(expectOk(await t.call('DELETE', `/api/task/${taskId}?purge=false`))).toEqual({
      task_id: taskId,
      close_code: 1,
    });
    expect(await total()).toBe(count);
    // Listed (and kept serialized) before the purge.
    expect((await t.call('GET', '/api/tasks?state=closed&with_areas=true')).body.data).toContainEqual(
      expect.objectContaining({ task_id: taskId }),
    );
    expect(expectOk(await t.call('DELETE', `/api/task/${taskId}?purge=true`))).toEqual({
      task_id: taskId,
      close_code: 1,
      purged: true,
    });
    expect(await total()).toBe(count - 1);
    const everything = expectOk(await t.call('GET', '/api/tasks?with_areas=true')) as TaskView[];
    expect(everything.map((task) => task.task_id)).not.toContain(taskId);
    expectError(await t.call('GET', `/api/task/${taskId}`), 'TASK_NOT_FOUND');
    expectError(await t.call('DELETE', `/api/task/${taskId}?purge=true`), 'TASK_NOT_FOUND');
    expectError(await t.call('DELETE', `/api/task/${taskId}?purged=1`), 'INVALID_PARAMETER', /query\.purged/);
  });
});

describe('purging a closed task keeps its undelivered events', () => {
  let e: TestEngine;
  let rx: Receiver;

  beforeAll(async () => {
    e = await startTestEngine(undefined, undefined, { delivery: { requestTimeoutMs: 500 } });
    rx = await Receiver.start();
  }, 60_000);

  afterAll(async () => {
    await e?.stop();
    await rx?.close();
  });

  it('delivers, signed, the task_closed event that was pending when the task was purged', async () => {
    rx.mode = { kind: 'status', status: 503 };
    const secret = 'a-receiver-secret-0123456789';
    const started = await e.call('POST', '/api/task', {
      json: imageTask({ report_url: rx.url, report_secret: secret }),
    });
    const taskId = (started.body.data as { task_id: string }).task_id;
    expect((await e.call('DELETE', `/api/task/${taskId}`)).body.msg).toBe('success');
    await rx.waitFor('a refused attempt', () => rx.requests.some((r) => r.task_id === taskId));
    expect((await e.call('DELETE', `/api/task/${taskId}?purge=true`)).body.data).toMatchObject({
      purged: true,
    });

    // Gone from the listing, its event still pending in the outbox, whose hourly purge keeps it.
    expect((await e.call('GET', `/api/task/${taskId}`)).status).toBe(404);
    e.advance(2 * 60 * 60_000);
    e.engine.outbox.purge();
    const pending = await e.call('GET', `/api/task/${taskId}/events`);
    expect(pending.body.data).toMatchObject({ items: [{ event: 'task_closed', state: 'pending' }] });

    rx.mode = { kind: 'ok' };
    e.advance(5 * 60_000);
    await rx.waitFor('the event accepted', () => rx.accepted.some((r) => r.task_id === taskId));
    const delivered = rx.accepted.find((r) => r.task_id === taskId);
    expect(delivered?.body).toMatchObject({ event: 'task_closed', task_id: taskId, data: { close_code: 1 } });
    expect(delivered?.headers?.['x-vision-signature']).toMatch(/\S/);
    await eventually('the delivery recorded', async () => {
      const events = (await e.call('GET', `/api/task/${taskId}/events`)).body.data as {
        items: { state: string }[];
      };
      return events.items[0]?.state === 'delivered';
    });
  });
});

describe('tasks stored before the bounds', () => {
  it('resume, list without their areas, answer whole, and take updates that leave them within the bounds', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vc-legacy-areas-'));
    let e = await startTestEngine(dataDir);
    const started = async (body: Record<string, unknown>) =>
      ((await e.call('POST', '/api/task', { json: body })).body.data as { task_id: string }).task_id;
    const image = await started(imageTask());
    const video = await started({ zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO });
    const closed = await started(imageTask());
    await e.call('DELETE', `/api/task/${closed}`);
    await e.engine.close();

    // What an engine before the bounds accepted and stored: 65 regions of 256 points (16640 points).
    const legacy = (issueVideoTask(VIDEO).app_configs as AppConfig[]).slice(0, 1);
    expect(JSON.stringify(legacy).length).toBeGreaterThan(300_000);
    const db = new Database(join(dataDir, 'engine.sqlite'));
    db.prepare('UPDATE tasks SET app_configs = ?').run(JSON.stringify(legacy));
    db.close();

    e = await startTestEngine(dataDir);
    try {
      await eventually('the video task resumed', async () => {
        const task = (await e.call('GET', `/api/task/${video}`)).body.data as TaskView;
        return task.status === 'running' && task.health.frames_analysed > 0;
      });
      const listed = (await e.call('GET', '/api/tasks')).body.data as TaskView[];
      expect(listed.map((task) => [task.task_id, task.status, 'app_configs' in task])).toEqual(
        expect.arrayContaining([
          [image, 'running', false],
          [video, 'running', false],
          [closed, 'closed', false],
        ]),
      );
      const withAreas = (await e.call('GET', '/api/tasks?with_areas=true')).body.data as TaskView[];
      expect(withAreas.map((task) => task.app_configs)).toEqual([legacy, legacy, legacy]);
      expect(((await e.call('GET', `/api/task/${image}`)).body.data as TaskView).app_configs).toEqual(legacy);

      // Changes that leave the areas as they are go through; new areas must fit.
      expect((await e.call('PUT', `/api/task/${image}`, { json: { name: 'kept' } })).body.msg).toBe(
        'success',
      );
      const refused = await e.call('PUT', `/api/task/${image}`, {
        json: { app_configs: [{ app_id: 'motion', polygon: legacy[0]?.polygon ?? [] }] },
      });
      expect({ code: refused.body.code, field: refused.body.field }).toEqual({
        code: 40001,
        field: 'app_configs',
      });
      expect(refused.body.msg).toMatch(/16640 points in all/);
      const within = [{ app_id: 'motion', polygon: circle(3000, 3000, 500, 64, 0), zones: [], masks: [] }];
      const updated = await e.call('PUT', `/api/task/${image}`, { json: { app_configs: within } });
      expect((updated.body.data as TaskView).app_configs).toEqual(within);
      expect((await e.call('DELETE', `/api/task/${closed}?purge=true`)).body.data).toMatchObject({
        purged: true,
      });
    } finally {
      await e.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
