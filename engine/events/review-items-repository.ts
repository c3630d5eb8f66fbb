import type { Db } from '../store/db';
import { SqlWhere } from '../store/sql-where';
import { StatementCache } from '../store/statement-cache';
import type { TaskMode } from '../tasks/schema';
import { memberPattern } from './alarm-facts';
import type { ReviewFilter } from './review-items-schema';

/** A stored item as the engine groups alarms into it. Lists are ",a,b," as in alarm-facts.ts. */
export interface ItemRow {
  id: number;
  item_id: string;
  task_id: string;
  track_id: string | null;
  group_key: string;
  apps: string;
  rules: string;
  classes: string;
  start_at: number;
  end_at: number;
  alarm_count: number;
  peak_score: number;
  best_event_id: string;
  first_event_id: string;
  reviewed_at: number | null;
}

/** An item as listed: with its camera (when the task still exists) and whether its best alarm has a picture. */
export interface ListedItemRow extends ItemRow {
  task_name: string | null;
  device_id: string | null;
  video_url: string | null;
  mode: TaskMode | null;
  best_has_image: number;
}

/** What an ignore reads of an item's alarms: each one's frame size and objects. */
export interface AlarmBoxes {
  frame: string;
  objects: string;
}

const LISTED = `i.*, t.name AS task_name, t.device_id, t.video_url, t.mode,
  COALESCE((SELECT image_dropped = 0 AND image_bytes > 0 FROM events e WHERE e.event_id = i.best_event_id), 0)
    AS best_has_image`;
const FROM = 'review_items i LEFT JOIN tasks t ON t.task_id = i.task_id';

/** The WHERE clause of a filter. */
function where(filter: ReviewFilter): SqlWhere {
  return new SqlWhere()
    .add('i.task_id = @task_id', 'task_id', filter.task_id)
    .add("i.apps LIKE @app_id ESCAPE '\\'", 'app_id', memberPattern(filter.app_id))
    .add("i.classes LIKE @class_id ESCAPE '\\'", 'class_id', memberPattern(filter.class_id))
    .add('i.start_at >= @since', 'since', filter.since)
    .add('i.start_at < @until', 'until', filter.until)
    .add('i.peak_score >= @min_score', 'min_score', filter.min_score)
    .isNull('i.reviewed_at', filter.reviewed);
}

/**
 * Review items (migration 17): written beside each alarm in the outbox's transaction, listed newest
 * first by storage id (a page boundary never moves when alarms arrive), marked reviewed with their
 * alarms. Statements are prepared once (per filter shape for the filtered ones).
 */
export class ReviewItemsRepository {
  private readonly sql;
  private readonly prepared: StatementCache;

  constructor(private readonly db: Db) {
    this.prepared = new StatementCache(db);
    this.sql = {
      open: db.prepare<{ task_id: string; group_key: string; from: number; to: number }, ItemRow>(
        `SELECT * FROM review_items
         WHERE task_id = @task_id AND group_key = @group_key AND end_at >= @from AND start_at <= @to
         ORDER BY id DESC LIMIT 1`,
      ),
      insert: db.prepare<Omit<ItemRow, 'id'>>(
        `INSERT INTO review_items (item_id, task_id, track_id, group_key, apps, rules, classes, start_at, end_at,
           alarm_count, peak_score, best_event_id, first_event_id, reviewed_at)
         VALUES (@item_id, @task_id, @track_id, @group_key, @apps, @rules, @classes, @start_at, @end_at,
           @alarm_count, @peak_score, @best_event_id, @first_event_id, @reviewed_at)`,
      ),
      update: db.prepare<ItemRow>(
        `UPDATE review_items SET apps = @apps, rules = @rules, classes = @classes, start_at = @start_at,
           end_at = @end_at, alarm_count = @alarm_count, peak_score = @peak_score,
           best_event_id = @best_event_id, first_event_id = @first_event_id, reviewed_at = @reviewed_at
         WHERE id = @id`,
      ),
      assign: db.prepare<[string, number]>('UPDATE events SET item_id = ? WHERE id = ?'),
      one: db.prepare<[string], ListedItemRow>(`SELECT ${LISTED} FROM ${FROM} WHERE i.item_id = ?`),
      reviewItems: db.prepare<{ ids: string; at: number | null }>(
        'UPDATE review_items SET reviewed_at = @at WHERE item_id IN (SELECT value FROM json_each(@ids))',
      ),
      reviewAlarms: db.prepare<{ ids: string; at: number | null }>(
        `UPDATE events SET reviewed_at = @at
         WHERE item_id IN (SELECT value FROM json_each(@ids)) AND kind = 'message'`,
      ),
      timeline: db.prepare<
        { task_id: string; since: number; until: number; limit: number },
        Pick<ItemRow, 'item_id' | 'start_at' | 'end_at' | 'peak_score' | 'classes' | 'reviewed_at'>
      >(
        `SELECT item_id, start_at, end_at, peak_score, classes, reviewed_at FROM review_items
         WHERE task_id = @task_id AND start_at < @until AND end_at >= @since
         ORDER BY start_at, id LIMIT @limit`,
      ),
      counts: db.prepare<[number], { task_id: string; total: number; unreviewed: number }>(
        `SELECT task_id, COUNT(*) AS total, COUNT(*) - COUNT(reviewed_at) AS unreviewed FROM review_items
         WHERE start_at >= ? GROUP BY task_id`,
      ),
      boxes: db.prepare<[string, number], AlarmBoxes>(
        `SELECT json_extract(body, '$.data.frame') AS frame,
           (SELECT json_group_array(json(o.value)) FROM json_each(body, '$.data.rules') r,
             json_each(r.value, '$.objects') o) AS objects
         FROM events WHERE item_id = ? AND kind = 'message' ORDER BY id LIMIT ?`,
      ),
      forget: db.prepare<{ ids: string }>(
        `DELETE FROM review_items WHERE item_id IN (SELECT value FROM json_each(@ids))
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.item_id = review_items.item_id)`,
      ),
    };
  }

  /** The newest item of the camera and key whose alarms reach within [from, to]. */
  open(taskId: string, groupKey: string, from: number, to: number): ItemRow | undefined {
    return this.sql.open.get({ task_id: taskId, group_key: groupKey, from, to });
  }

  insert(row: Omit<ItemRow, 'id'>): void {
    this.sql.insert.run(row);
  }

  update(row: ItemRow): void {
    this.sql.update.run(row);
  }

  /** Puts the stored alarm (its storage id) in the item. */
  assign(itemId: string, eventRowId: number): void {
    this.sql.assign.run(itemId, eventRowId);
  }

  /** Up to `limit` items older than the storage id `before` (newest first when absent). */
  page(filter: ReviewFilter, before: number | undefined, limit: number): ListedItemRow[] {
    const { sql, params } = where(filter);
    const older = before === undefined ? '' : ' AND i.id < @before';
    return this.prepared
      .get(`SELECT ${LISTED} FROM ${FROM} WHERE ${sql}${older} ORDER BY i.id DESC LIMIT @limit`)
      .all({ ...params, ...(before !== undefined && { before }), limit }) as ListedItemRow[];
  }

  count(filter: ReviewFilter): number {
    const { sql, params } = where(filter);
    return (
      this.prepared.get(`SELECT COUNT(*) AS n FROM review_items i WHERE ${sql}`).get(params) as { n: number }
    ).n;
  }

  one(itemId: string): ListedItemRow | undefined {
    return this.sql.one.get(itemId);
  }

  /** Marks items and every alarm in them reviewed at `at` (null: not reviewed); how many items there were. */
  review(itemIds: readonly string[], at: number | null): number {
    const ids = JSON.stringify(itemIds);
    return this.db.transaction(() => {
      const updated = this.sql.reviewItems.run({ ids, at }).changes;
      this.sql.reviewAlarms.run({ ids, at });
      return updated;
    })();
  }

  /**
   * Marks the newest `limit` items the filter matches, and their alarms, in one transaction (the items
   * chosen once, by the index); how many items there were.
   */
  reviewMatching(filter: ReviewFilter, at: number | null, limit: number): number {
    const { sql, params } = where(filter);
    return this.db.transaction(() => {
      const ids = this.prepared
        .get(
          `SELECT json_group_array(item_id) AS ids FROM
           (SELECT i.item_id FROM review_items i WHERE ${sql} ORDER BY i.id DESC LIMIT @limit)`,
        )
        .get({ ...params, limit }) as { ids: string };
      this.sql.reviewAlarms.run({ ids: ids.ids, at });
      return this.sql.reviewItems.run({ ids: ids.ids, at }).changes;
    })();
  }

  timeline(taskId: string, since: number, until: number, limit: number) {
    return this.sql.timeline.all({ task_id: taskId, since, until, limit });
  }

  counts(since: number): Array<{ task_id: string; total: number; unreviewed: number }> {
    return this.sql.counts.all(since);
  }

  /** The frames and objects of the item's first `limit` alarms. */
  boxes(itemId: string, limit: number): AlarmBoxes[] {
    return this.sql.boxes.all(itemId, limit);
  }

  /** Deletes those of the given items no alarm is left in (the outbox removed them). */
  forgetEmpty(itemIds: readonly string[]): void {
    if (itemIds.length > 0) this.sql.forget.run({ ids: JSON.stringify(itemIds) });
  }
}
