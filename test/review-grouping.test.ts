import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { ManualClock } from '../engine/clock';
import { EventBus } from '../engine/events/bus';
import { REVIEW_GAP_MS } from '../engine/events/review-grouping';
import { ReviewItems, type ReviewTasks } from '../engine/events/review-items';
import { type ItemRow, ReviewItemsRepository } from '../engine/events/review-items-repository';
import { ReviewRepository } from '../engine/events/review-repository';
import type { NewEvent } from '../engine/events/schema';
import { type Db, migrate, openDb } from '../engine/store/db';
import type { TaskView, UpdateTaskBody } from '../engine/tasks/schema';
import { message } from './helpers/receiver';

/**
 * Review items as the outbox writes them (issue 35): each stored alarm joins its visit's item or opens
 * one in the transaction that stores it; migration 17 groups alarms stored before it the same way;
 * the outbox's retention takes items that lose all their alarms. A real SQLite database in a data dir.
 */

const T0 = 1_780_000_000_000;
const DAY = 24 * 3600_000;
let dir: string;
let db: Db;
let clock: ManualClock;
let outbox: Outbox;
let listed: string[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-review-grouping-'));
  db = openDb(dir);
  clock = new ManualClock(T0);
  listed = ['cam', 'other'];
  outbox = new Outbox(new OutboxRepository(db), { listedTaskIds: () => listed }, clock, new EventBus());
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Alarm {
  task?: string;
  app?: string;
  track?: string;
  at: number;
  score?: number;
  classId?: string;
  image?: boolean;
}

/** Stores one alarm through the outbox; returns its event_id. */
function alarm({ task = 'cam', app = 'person', track = '', at, score = 0.9, classId = '0', image }: Alarm) {
  const base = message(task, 1, 8, app);
  const event: NewEvent = {
    ...base,
    timestamp: T0 + at,
    data: {
      frame: { width: 768, height: 576, id: 1 },
      ...(image && { image_id: 1 }),
      rules: [
        {
          id: `${app}:${classId}`,
          class_id: classId,
          image: 'AAAA',
          objects: [
            {
              track_id: track,
              x: 100,
              y: 200,
              w: 40,
              h: 80,
              score,
              class_id: classId,
              name: 'person',
            },
          ],
        },
      ],
    },
  } as NewEvent;
  return outbox.enqueue({ task_id: task, report_url: '' }, event).event_id;
}

const items = () => db.prepare('SELECT * FROM review_items ORDER BY id').all() as ItemRow[];
/** Each item's alarms (event ids, in storage order), items in storage order. */
const groups = () =>
  (
    db
      .prepare(
        `SELECT json_group_array(event_id) AS ids FROM
           (SELECT e.event_id, e.item_id, i.id AS item FROM events e JOIN review_items i USING (item_id) ORDER BY e.id)
         GROUP BY item ORDER BY item`,
      )
      .all() as Array<{ ids: string }>
  ).map((row) => JSON.parse(row.ids) as string[]);

describe('grouping as alarms are stored', () => {
  it('one track re-firing every 5 s for 10 min is one item; a gap over REVIEW_GAP_MS opens the next', () => {
    const firing = Array.from({ length: 120 }, (_, i) =>
      alarm({ track: '7', at: i * 5000, score: 0.5 + i / 1000 }),
    );
    const late = alarm({ track: '7', at: 119 * 5000 + REVIEW_GAP_MS + 1 });
    const [visit, next] = items();
    expect(items()).toHaveLength(2);
    expect(visit).toMatchObject({
      task_id: 'cam',
      track_id: '7',
      start_at: T0,
      end_at: T0 + 119 * 5000,
      alarm_count: 120,
      peak_score: expect.closeTo(0.619, 3),
      best_event_id: firing[119],
      first_event_id: firing[0],
    });
    expect(next).toMatchObject({ alarm_count: 1, first_event_id: late });
    expect(groups()).toEqual([firing, [late]]);
  });

  it('alarm at exactly the gap still joins', () => {
    alarm({ track: '7', at: 0 });
    alarm({ track: '7', at: REVIEW_GAP_MS });
    expect(items()).toHaveLength(1);
  });

  it('merges the apps and rules firing on one track; another track or camera is another item', () => {
    const a = alarm({ track: '3', at: 0, app: 'person' });
    const b = alarm({ track: '3', at: 1000, app: 'intruder', classId: '0', score: 0.95 });
    const c = alarm({ track: '4', at: 1500 });
    const d = alarm({ task: 'other', track: '3', at: 2000 });
    expect(groups()).toEqual([[a, b], [c], [d]]);
    expect(items()[0]).toMatchObject({
      apps: ',person,intruder,',
      rules: ',person:0,intruder:0,',
      classes: ',0,',
      best_event_id: b,
    });
  });

  it('alarms without a track group per camera, app and rules within the gap', () => {
    const a = alarm({ at: 0 });
    const b = alarm({ at: 30_000 });
    const c = alarm({ at: 30_000, app: 'counter' });
    const d = alarm({ at: 30_000 + REVIEW_GAP_MS + 1 });
    // An image task's objects are numbered per picture: never one track across pictures.
    const e = alarm({ at: 200_000, track: '1', image: true });
    const f = alarm({ at: 201_000, track: '1', image: true });
    const g = alarm({ at: 202_000, track: '1' });
    expect(groups()).toEqual([[a, b], [c], [d], [e, f], [g]]);
    expect(items()[0]?.track_id).toBeNull();
    expect(items()[3]?.track_id).toBeNull();
  });

  it('a new alarm in a reviewed item makes it unreviewed again; its old alarms stay reviewed', () => {
    alarm({ track: '1', at: 0 });
    db.prepare('UPDATE review_items SET reviewed_at = 5').run();
    db.prepare('UPDATE events SET reviewed_at = 5').run();
    alarm({ track: '1', at: 1000 });
    expect(items()[0]?.reviewed_at).toBeNull();
    expect(db.prepare('SELECT COUNT(*) AS n FROM events WHERE reviewed_at = 5').get()).toEqual({ n: 1 });
  });

  it('task events (stream lost, closed) are no alarms: no item', () => {
    outbox.enqueue(
      { task_id: 'cam', report_url: '' },
      {
        event: 'stream_lost',
        task_id: 'cam',
        app_id: '',
        business_id: '',
        timestamp: T0,
        data: { status: 'lost', dump: '' },
      },
    );
    expect(items()).toEqual([]);
    expect(db.prepare('SELECT item_id FROM events').get()).toEqual({ item_id: null });
  });
});

describe('migration 17 groups the alarms stored before it', () => {
  it('as the engine groups them as they come', () => {
    // Interleaved cameras, tracks, apps, trackless alarms, image alarms and gaps.
    const plan: Alarm[] = [];
    for (let i = 0; i < 60; i++) {
      plan.push({
        track: String(i % 4),
        at: i * 7000,
        app: i % 3 === 0 ? 'intruder' : 'person',
        score: (i % 10) / 10,
      });
      if (i % 5 === 0) plan.push({ at: i * 7000 + 10 });
      if (i % 7 === 0) plan.push({ task: 'other', track: '1', at: i * 7000 + 20, image: i % 2 === 0 });
      if (i === 30) plan.push({ track: '2', at: i * 7000 + 5 * REVIEW_GAP_MS });
    }
    for (const step of plan) alarm(step);
    db.prepare('UPDATE events SET reviewed_at = 9 WHERE id % 2 = 0').run();
    db.prepare(
      `UPDATE review_items SET reviewed_at = (SELECT CASE WHEN COUNT(e.reviewed_at) = COUNT(*)
         THEN MAX(e.reviewed_at) END FROM events e WHERE e.item_id = review_items.item_id)`,
    ).run();
    const live = { groups: groups(), items: items() };
    expect(live.items.length).toBeGreaterThan(10);

    // The database as it was before migration 17, then migrated.
    db.exec(`DROP INDEX events_item; ALTER TABLE events DROP COLUMN item_id; DROP TABLE review_items;
      DELETE FROM schema_migrations WHERE version = 17`);
    migrate(db);

    expect(groups()).toEqual(live.groups);
    const sorted = (list: string) => list.split(',').filter(Boolean).sort();
    const comparable = (item: ItemRow) => ({
      ...item,
      item_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      apps: sorted(item.apps),
      rules: sorted(item.rules),
      classes: sorted(item.classes),
    });
    expect(items().map(comparable)).toEqual(live.items.map(comparable));
  });
});

describe('retention', () => {
  it('items that lose all their alarms go with them; the others stay', () => {
    listed = [];
    alarm({ track: '1', at: 0 });
    clock.advance(2 * DAY);
    const kept = alarm({ track: '2', at: 2 * DAY });
    expect(items()).toHaveLength(2);
    // The first alarm is 24 h old and its task has left the listing: the outbox's bound removes it.
    expect(outbox.purge()).toBe(1);
    expect(items().map((item) => item.first_event_id)).toEqual([kept]);
  });

  it('a released task (cluster: another node delivers) loses its pending alarms and their items', () => {
    const pending = outbox.enqueue(
      { task_id: 'cam', report_url: 'http://127.0.0.1:9/rx' },
      message('cam', 1),
    );
    expect(items()).toHaveLength(1);
    expect(outbox.release('cam')).toBe(1);
    expect(pending.event_id).toEqual(expect.any(String));
    expect(items()).toEqual([]);
  });
});

describe('cluster mode', () => {
  it("proposes an ignore but refuses to apply it: the task's owner answers the proposal's request", () => {
    alarm({ track: '1', at: 0 });
    // The task as the registry shows it, and the updates asked of it: recorded rather than made, since
    // what is judged is that none is asked (a site of engines is test/cluster-*.test.ts' part).
    const updates: UpdateTaskBody[] = [];
    const tasks: ReviewTasks = {
      get: () =>
        ({ task_id: 'cam', app_ids: ['person'], rule_overrides: {}, app_configs: [] }) as unknown as TaskView,
      update: (_taskId, body) => {
        updates.push(body);
        return tasks.get('cam');
      },
    };
    const review = (clusterMode: boolean) =>
      new ReviewItems(new ReviewItemsRepository(db), new ReviewRepository(db), tasks, clock, clusterMode);
    const [item] = items();
    const proposed = review(true).ignore(item?.item_id ?? '', { kind: 'class', apply: false });
    expect(proposed.proposal.request).toEqual({
      method: 'PUT',
      path: '/api/task/cam',
      body: {
        rule_overrides: { person: { classes: [{ class_id: '0', threshold: 1, min_pixel: 1_000_000 }] } },
      },
    });
    expect(() => review(true).ignore(item?.item_id ?? '', { kind: 'class', apply: true })).toThrow(
      /cluster mode.*PUT \/api\/task\/cam/,
    );
    expect(updates).toEqual([]);
    // A single workstation applies it.
    review(false).ignore(item?.item_id ?? '', { kind: 'class', apply: true });
    expect(updates).toEqual([proposed.proposal.request.body]);
  });
});
