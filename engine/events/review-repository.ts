import type { Db } from '../store/db';
import { SqlWhere } from '../store/sql-where';
import { StatementCache } from '../store/statement-cache';
import { memberPattern } from './alarm-facts';
import type { DeliveryState } from './delivery';

/** What alarm review narrows the stored alarms (message events) to; every field optional. */
export interface AlarmFilter {
  task_id?: string;
  app_id?: string;
  rule?: string;
  class_id?: string;
  /** ms since the epoch, inclusive. */
  since?: number;
  /** ms since the epoch, exclusive. */
  until?: number;
  min_score?: number;
  reviewed?: boolean;
}

export interface AlarmRow {
  id: number;
  event_id: string;
  task_id: string;
  seq: number;
  app_id: string;
  timestamp: number;
  rules: string;
  classes: string;
  max_score: number;
  reviewed_at: number | null;
  has_image: number;
  state: DeliveryState;
  attempts: number;
}

export interface AlarmBody {
  body: string;
  image_dropped: number;
}

const COLUMNS = `id, event_id, task_id, seq, app_id, timestamp, rules, classes, max_score, reviewed_at,
  (image_dropped = 0 AND image_bytes > 0) AS has_image, state, attempts`;

/** The WHERE clause of a filter. */
function where(filter: AlarmFilter, before: number | undefined): SqlWhere {
  return new SqlWhere("kind = 'message'")
    .add('task_id = @task_id', 'task_id', filter.task_id)
    .add('app_id = @app_id', 'app_id', filter.app_id)
    .add("rules LIKE @rule ESCAPE '\\'", 'rule', memberPattern(filter.rule))
    .add("classes LIKE @class_id ESCAPE '\\'", 'class_id', memberPattern(filter.class_id))
    .add('timestamp >= @since', 'since', filter.since)
    .add('timestamp < @until', 'until', filter.until)
    .add('max_score >= @min_score', 'min_score', filter.min_score)
    .isNull('reviewed_at', filter.reviewed)
    .add('id < @before', 'before', before);
}

/**
 * Stored alarms as review reads them (the outbox's `events` table, its message rows): filtered,
 * newest first by storage order, paged by the storage id (a page boundary never moves when events
 * arrive), and marked reviewed. Statements are prepared once per filter shape.
 */
export class ReviewRepository {
  private readonly sql;
  private readonly prepared: StatementCache;

  constructor(private readonly db: Db) {
    this.prepared = new StatementCache(db);
    this.sql = {
      body: db.prepare<[string], AlarmBody & AlarmRow>(
        `SELECT ${COLUMNS}, body, image_dropped FROM events WHERE event_id = ? AND kind = 'message'`,
      ),
      review: db.prepare<{ ids: string; at: number | null }>(
        `UPDATE events SET reviewed_at = @at
         WHERE kind = 'message' AND event_id IN (SELECT value FROM json_each(@ids))`,
      ),
      // An item is reviewed when its alarms all are (marked one by one through PUT /api/alarms/review).
      followAlarms: db.prepare<{ ids: string }>(
        `UPDATE review_items SET reviewed_at = (SELECT CASE WHEN COUNT(e.reviewed_at) = COUNT(*)
             THEN MAX(e.reviewed_at) END FROM events e WHERE e.item_id = review_items.item_id)
         WHERE item_id IN (SELECT DISTINCT item_id FROM events
           WHERE event_id IN (SELECT value FROM json_each(@ids)) AND item_id IS NOT NULL)`,
      ),
      ofItem: db.prepare<[string, number], AlarmRow>(
        `SELECT ${COLUMNS} FROM events WHERE item_id = ? AND kind = 'message' ORDER BY id LIMIT ?`,
      ),
      tasksAndApps: db.prepare<[], { task_id: string; app_id: string }>(
        "SELECT DISTINCT task_id, app_id FROM events WHERE kind = 'message'",
      ),
      rulesAndClasses: db.prepare<[number], { rules: string; classes: string }>(
        "SELECT DISTINCT rules, classes FROM events WHERE kind = 'message' LIMIT ?",
      ),
    };
  }

  /** Up to `limit` alarms older than the storage id `before` (newest first when absent). */
  page(filter: AlarmFilter, before: number | undefined, limit: number): AlarmRow[] {
    const { sql, params } = where(filter, before);
    return this.prepared.get(`SELECT ${COLUMNS} FROM events WHERE ${sql} ORDER BY id DESC LIMIT @limit`).all({
      ...params,
      limit,
    }) as AlarmRow[];
  }

  count(filter: AlarmFilter): number {
    const { sql, params } = where(filter, undefined);
    return (this.prepared.get(`SELECT COUNT(*) AS n FROM events WHERE ${sql}`).get(params) as { n: number })
      .n;
  }

  /** One alarm with its body (snapshots included, unless the outbox's bound dropped them). */
  withBody(eventId: string): (AlarmRow & AlarmBody) | undefined {
    return this.sql.body.get(eventId);
  }

  /**
   * Marks alarms reviewed at `at` (null: not reviewed), and their review items with them (reviewed
   * once all their alarms are); how many alarms there were.
   */
  setReviewed(eventIds: readonly string[], at: number | null): number {
    const ids = JSON.stringify(eventIds);
    return this.db.transaction(() => {
      const updated = this.sql.review.run({ ids, at }).changes;
      this.sql.followAlarms.run({ ids });
      return updated;
    })();
  }

  /** The first `limit` alarms of a review item, oldest first. */
  ofItem(itemId: string, limit: number): AlarmRow[] {
    return this.sql.ofItem.all(itemId, limit);
  }

  tasksAndApps(): Array<{ task_id: string; app_id: string }> {
    return this.sql.tasksAndApps.all();
  }

  /** Distinct rule and class lists, at most `limit` combinations. */
  rulesAndClasses(limit: number): Array<{ rules: string; classes: string }> {
    return this.sql.rulesAndClasses.all(limit);
  }
}
