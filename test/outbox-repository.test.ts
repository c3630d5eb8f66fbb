import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type NewEventRow, OutboxRepository } from '../engine/callbacks/outbox-repository';
import type { DeliveryState } from '../engine/events/delivery';
import { type Db, openDb } from '../engine/store/db';

const DAY = 24 * 3600_000;
let dir: string;
let db: Db;
let repo: OutboxRepository;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-outbox-repo-'));
  db = openDb(dir);
  repo = new OutboxRepository(db);
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Stores one event of a task (assigning its seq) and returns its storage id. */
function store(
  taskId: string,
  createdAt: number,
  state: DeliveryState = 'pending',
  reportUrl = 'http://rx',
): number {
  const seq = repo.nextSeq(taskId, reportUrl, 'secret');
  const row: NewEventRow = {
    event_id: `${taskId}-${seq}`,
    task_id: taskId,
    seq,
    kind: 'message',
    app_id: 'app',
    timestamp: createdAt,
    body: JSON.stringify({ seq }),
    image_bytes: 10,
    state,
    created_at: createdAt,
    deadline_at: createdAt + DAY,
    rules: ',app:0,',
    classes: ',0,',
    max_score: 0.5,
  };
  return repo.insert(row);
}

const answer = { http_status: 200, answer_code: 0, answer_msg: 'ok' };

describe('OutboxRepository', () => {
  it('numbers each task gap-free and hands out its lowest pending event with its target', () => {
    const a1 = store('a', 1000);
    store('a', 1001);
    store('b', 1002);
    expect([repo.lastSeq('a'), repo.lastSeq('b'), repo.lastSeq('c')]).toEqual([2, 1, undefined]);
    expect(repo.head('a')).toEqual({
      id: a1,
      event_id: 'a-1',
      task_id: 'a',
      seq: 1,
      json: '{"seq":1}',
      attempts: 0,
      next_attempt_at: 1000,
      deadline_at: 1000 + DAY,
      report_url: 'http://rx',
      report_secret: 'secret',
    });
    expect(repo.pendingTasks().sort()).toEqual(['a', 'b']);
    expect(repo.imageTotal()).toBe(30);
  });

  it('marks only pending events, kills one whose retry falls past its deadline, and keeps FULL durability after', () => {
    const delivered = store('a', 1000);
    const dead = store('a', 1000);
    expect(repo.markDelivered({ id: delivered, now: 2000, ...answer })).toBe(true);
    expect(repo.markDelivered({ id: delivered, now: 3000, ...answer })).toBe(false);
    expect(repo.markFailed({ id: dead, error: 'refused', next_attempt_at: 1000 + DAY + 1, ...answer })).toBe(
      true,
    );
    expect([repo.record(delivered), repo.record(dead)].map((row) => [row?.state, row?.attempts])).toEqual([
      ['delivered', 1],
      ['dead', 1],
    ]);
    expect(repo.stateCounts()).toEqual({ delivered: 1, dead: 1 });
    // Relaxed for the mark only: the engine's policy (engine/store/db.ts) is back.
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('pages a task by seq, by state and with bodies', () => {
    for (const at of [1, 2, 3]) store('a', at);
    repo.markDelivered({ id: 2, now: 5, ...answer });
    const seqs = (rows: { seq: number }[]) => rows.map((row) => row.seq);
    expect(seqs(repo.page({ taskId: 'a', afterSeq: 1, limit: 10 }))).toEqual([2, 3]);
    expect(seqs(repo.page({ taskId: 'a', afterSeq: 0, limit: 10, state: 'pending' }))).toEqual([1, 3]);
    expect(repo.pageWithBodies({ taskId: 'a', afterSeq: 2, limit: 1 }).map((row) => row.body)).toEqual([
      '{"seq":3}',
    ]);
    expect(repo.since(1, 'a', 1)).toEqual([{ id: 2, json: '{"seq":2}' }]);
  });

  it('reads events by storage id for the MQTT publisher', () => {
    expect([repo.maxId(), repo.countAfter(0), repo.fromId(1, 10)]).toEqual([0, 0, []]);
    for (const at of [1, 2, 3]) store(at === 2 ? 'b' : 'a', at);
    expect([repo.maxId(), repo.countAfter(1)]).toEqual([3, 2]);
    expect(repo.fromId(2, 1)).toEqual([{ id: 2, task_id: 'b', seq: 1, app_id: 'app', body: '{"seq":1}' }]);
  });

  it('purges settled events by age and listing, never pending ones, and forgets tasks gone with no event', () => {
    const now = 30 * DAY;
    const old = now - 8 * DAY;
    const dayOld = now - 2 * DAY;
    store('listed', old, 'no_receiver'); // a week old: goes even though listed
    store('listed', dayOld, 'no_receiver'); // a day old but listed: stays
    store('listed', old, 'dead'); // dead and listed: stays
    store('gone', dayOld, 'no_receiver'); // a day old, task gone: goes
    store('gone', old, 'dead'); // dead a week, task gone: goes
    store('pending', old); // pending: stays, whatever its age
    const removed = repo.purge(now - DAY, now - 7 * DAY, ['listed']);
    expect(removed).toBe(3);
    expect(repo.page({ taskId: 'listed', afterSeq: 0, limit: 10 }).map((row) => row.seq)).toEqual([2, 3]);
    expect([repo.lastSeq('gone'), repo.lastSeq('pending'), repo.lastSeq('listed')]).toEqual([
      undefined,
      1,
      3,
    ]);
  });
});
