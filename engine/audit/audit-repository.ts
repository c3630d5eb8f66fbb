import type { Db } from '../store/db';
import { SqlWhere } from '../store/sql-where';
import type { AuditOutcome } from './audit-schema';

/** A row of the `audit` table; `fields` is the body's field names, comma-separated. */
export interface AuditRow {
  id: number;
  at: number;
  username: string | null;
  client: string;
  action: string;
  route: string;
  target: string | null;
  outcome: AuditOutcome;
  status: number;
  code: number;
  fields: string;
  detail: string | null;
}

export interface AuditFilter {
  username?: string;
  action?: string;
  target?: string;
  outcome?: AuditOutcome;
  /** ms since the epoch, inclusive. */
  since?: number;
  /** ms since the epoch, exclusive. */
  until?: number;
}

const COLUMNS = 'id, at, username, client, action, route, target, outcome, status, code, fields, detail';

/** The `audit` table: append, trim, read newest first. */
export class AuditRepository {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = {
      insert: db.prepare<Omit<AuditRow, 'id'>>(
        `INSERT INTO audit (at, username, client, action, route, target, outcome, status, code, fields, detail)
         VALUES (@at, @username, @client, @action, @route, @target, @outcome, @status, @code, @fields, @detail)`,
      ),
      trimAge: db.prepare<[number]>('DELETE FROM audit WHERE at < ?'),
      // Ids only grow: all but the newest `keep` are those at or below the newest id less keep.
      trimCount: db.prepare<[number]>('DELETE FROM audit WHERE id <= (SELECT MAX(id) FROM audit) - ?'),
    };
  }

  /**
   * Appends an entry and, in the same transaction, deletes those older than `olderThan` and all but
   * the newest `keep`: the trail never outgrows its bounds. Returns the new entry's id.
   */
  append(row: Omit<AuditRow, 'id'>, olderThan: number, keep: number): number {
    return this.db.transaction(() => {
      const id = Number(this.sql.insert.run(row).lastInsertRowid);
      this.sql.trimAge.run(olderThan);
      this.sql.trimCount.run(keep);
      return id;
    })();
  }

  /** Up to `limit` entries matching the filter, newest first, below the id `before` when given. */
  page(filter: AuditFilter, before: number | undefined, limit: number): AuditRow[] {
    const where = new SqlWhere()
      .add('username = @username', 'username', filter.username)
      .add('action = @action', 'action', filter.action)
      .add('target = @target', 'target', filter.target)
      .add('outcome = @outcome', 'outcome', filter.outcome)
      .add('at >= @since', 'since', filter.since)
      .add('at < @until', 'until', filter.until)
      .add('id < @before', 'before', before);
    return this.db
      .prepare<Record<string, unknown>, AuditRow>(
        `SELECT ${COLUMNS} FROM audit WHERE ${where.sql} ORDER BY id DESC LIMIT @limit`,
      )
      .all({ ...where.params, limit });
  }
}
