import type { Db } from '../store/db';
import type { ClipReason, ClipState } from './clip-schema';

/** A row of the `clips` table (migration 16). */
export interface ClipRow {
  id: number;
  clip_id: string;
  task_id: string;
  event_id: string | null;
  state: ClipState;
  reason: string | null;
  start_at: number | null;
  end_at: number | null;
  preroll_short: number;
  bytes: number;
  codec: string | null;
  created_at: number;
}

export interface ClipFilter {
  task_id?: string;
  /** true: saved clips (no event); false: alarms' clips. */
  saved?: boolean;
}

export interface ReadyClip {
  clip_id: string;
  preroll_short: boolean;
  start_at: number;
  end_at: number;
  bytes: number;
  codec: string | null;
}

const FILTER = `(@task_id IS NULL OR task_id = @task_id)
  AND (@saved IS NULL OR (event_id IS NULL) = @saved)`;

/**
 * The clips and which alarms name each. Every statement is prepared once on the engine's one
 * connection; the alarm's rows are written inside the outbox's transaction of its event.
 */
export class ClipsRepository {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = {
      insert: db.prepare<{ clip_id: string; task_id: string; event_id: string | null; created_at: number }>(
        `INSERT INTO clips (clip_id, task_id, event_id, state, created_at)
         VALUES (@clip_id, @task_id, @event_id, 'pending', @created_at)`,
      ),
      link: db.prepare<[string, string]>(
        'INSERT OR IGNORE INTO clip_alarms (event_id, clip_id) VALUES (?, ?)',
      ),
      ready: db.prepare<Omit<ReadyClip, 'preroll_short'> & { preroll: number }>(
        `UPDATE clips SET state = 'ready', reason = NULL, start_at = @start_at, end_at = @end_at,
           preroll_short = @preroll, bytes = @bytes, codec = @codec
         WHERE clip_id = @clip_id AND state = 'pending'`,
      ),
      none: db.prepare<{ clip_id: string; reason: string; preroll: number | null }>(
        `UPDATE clips SET state = 'none', reason = @reason, bytes = 0,
           preroll_short = COALESCE(@preroll, preroll_short)
         WHERE clip_id = @clip_id`,
      ),
      restarted: db.prepare<[]>(
        "UPDATE clips SET state = 'none', reason = 'engine_restarted' WHERE state = 'pending'",
      ),
      byId: db.prepare<[string], ClipRow>('SELECT * FROM clips WHERE clip_id = ?'),
      page: db.prepare<
        { task_id: string | null; saved: number | null; before: number; limit: number },
        ClipRow
      >(`SELECT * FROM clips WHERE ${FILTER} AND id < @before ORDER BY id DESC LIMIT @limit`),
      count: db.prepare<{ task_id: string | null; saved: number | null }, { n: number }>(
        `SELECT COUNT(*) AS n FROM clips WHERE ${FILTER}`,
      ),
      ofEvents: db.prepare<[string], ClipRow & { alarm: string }>(
        `SELECT a.event_id AS alarm, c.* FROM clip_alarms a JOIN clips c ON c.clip_id = a.clip_id
         WHERE a.event_id IN (SELECT value FROM json_each(?))`,
      ),
      usage: db.prepare<[], { count: number; bytes: number | null }>(
        "SELECT COUNT(*) AS count, SUM(bytes) AS bytes FROM clips WHERE state = 'ready'",
      ),
      oldestReady: db.prepare<[number], { clip_id: string; task_id: string; bytes: number }>(
        "SELECT clip_id, task_id, bytes FROM clips WHERE state = 'ready' ORDER BY id LIMIT ?",
      ),
      readyBefore: db.prepare<[number], { clip_id: string; task_id: string }>(
        "SELECT clip_id, task_id FROM clips WHERE state = 'ready' AND created_at < ?",
      ),
      readyIds: db.prepare<[], { clip_id: string }>("SELECT clip_id FROM clips WHERE state = 'ready'"),
      ofTask: db.prepare<[string], { clip_id: string }>('SELECT clip_id FROM clips WHERE task_id = ?'),
      remove: db.prepare<[string]>('DELETE FROM clips WHERE clip_id = ?'),
      unlink: db.prepare<[string]>('DELETE FROM clip_alarms WHERE clip_id = ?'),
      forgetNone: db.prepare<[number]>(
        `DELETE FROM clip_alarms WHERE clip_id IN
           (SELECT clip_id FROM clips WHERE state = 'none' AND created_at < ?)`,
      ),
      purgeNone: db.prepare<[number]>("DELETE FROM clips WHERE state = 'none' AND created_at < ?"),
    };
  }

  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  /** A new pending clip, and the alarm that asked for it (none for a saved clip). */
  insert(clip: { clip_id: string; task_id: string; event_id: string | null; created_at: number }): void {
    this.sql.insert.run(clip);
    if (clip.event_id !== null) this.sql.link.run(clip.event_id, clip.clip_id);
  }

  /** An alarm that joined a pending clip. */
  link(eventId: string, clipId: string): void {
    this.sql.link.run(eventId, clipId);
  }

  /** A pending clip's file is whole; false when it is no longer pending (removed meanwhile). */
  markReady(clip: ReadyClip): boolean {
    const { preroll_short, ...fields } = clip;
    return this.sql.ready.run({ ...fields, preroll: preroll_short ? 1 : 0 }).changes > 0;
  }

  /** A clip that has no file (any more), and why. */
  markNone(clipId: string, reason: ClipReason, prerollShort?: boolean): void {
    const preroll = prerollShort === undefined ? null : prerollShort ? 1 : 0;
    this.sql.none.run({ clip_id: clipId, reason, preroll });
  }

  /** Clips a previous run left pending: their cut never happened. Returns how many. */
  endPending(): number {
    return this.sql.restarted.run().changes;
  }

  find(clipId: string): ClipRow | undefined {
    return this.sql.byId.get(clipId);
  }

  page(filter: ClipFilter, before: number | undefined, limit: number): ClipRow[] {
    return this.sql.page.all({
      ...this.filterArgs(filter),
      before: before ?? Number.MAX_SAFE_INTEGER,
      limit,
    });
  }

  count(filter: ClipFilter): number {
    return this.sql.count.get(this.filterArgs(filter))?.n ?? 0;
  }

  /** The clip each of these alarms names, by event_id. */
  ofEvents(eventIds: readonly string[]): Map<string, ClipRow> {
    const rows = eventIds.length === 0 ? [] : this.sql.ofEvents.all(JSON.stringify(eventIds));
    return new Map(rows.map(({ alarm, ...row }) => [alarm, row]));
  }

  usage(): { count: number; bytes: number } {
    const row = this.sql.usage.get();
    return { count: row?.count ?? 0, bytes: row?.bytes ?? 0 };
  }

  /** The oldest ready clips first. */
  oldestReady(limit: number): { clip_id: string; task_id: string; bytes: number }[] {
    return this.sql.oldestReady.all(limit);
  }

  /** Ready clips made before `at`. */
  readyBefore(at: number): { clip_id: string; task_id: string }[] {
    return this.sql.readyBefore.all(at);
  }

  readyIds(): Set<string> {
    return new Set(this.sql.readyIds.all().map((row) => row.clip_id));
  }

  ofTask(taskId: string): string[] {
    return this.sql.ofTask.all(taskId).map((row) => row.clip_id);
  }

  /** Removes a clip's row and its alarms' links to it. */
  remove(clipId: string): boolean {
    this.sql.unlink.run(clipId);
    return this.sql.remove.run(clipId).changes > 0;
  }

  /** Forgets the rows of clips without a file made before `at`. */
  purgeNone(at: number): void {
    this.sql.forgetNone.run(at);
    this.sql.purgeNone.run(at);
  }

  private filterArgs(filter: ClipFilter) {
    return {
      task_id: filter.task_id ?? null,
      saved: filter.saved === undefined ? null : filter.saved ? 1 : 0,
    };
  }
}
