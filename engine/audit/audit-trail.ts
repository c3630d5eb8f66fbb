import type { Clock } from '../clock';
import type { EngineLogger } from '../log/logger';
import type { AuditRepository, AuditRow } from './audit-repository';
import { AUDIT_PAGE, type AuditEntry, type AuditPage, type AuditQuery } from './audit-schema';

export interface AuditRetention {
  /** Entries older than this are deleted with the next entry written. */
  maxAgeMs: number;
  /** The newest this many entries are kept. */
  maxEntries: number;
}

/** 90 days, 100,000 entries (about 20 MB): a quarter of a busy site's changes, logins included. */
export const AUDIT_RETENTION_DEFAULTS: AuditRetention = {
  maxAgeMs: 90 * 24 * 3600_000,
  maxEntries: 100_000,
};

/** What the API layer knows of a request it answered; the trail adds the id and the time. */
export type AuditRecord = Omit<AuditEntry, 'id' | 'at'>;

const toEntry = (row: AuditRow): AuditEntry => ({
  ...row,
  fields: row.fields === '' ? [] : row.fields.split(','),
});

/**
 * Who changed what: every change a user asked for through the API (api/audit-hook.ts decides which
 * requests), stored in the database before the answer leaves, within its bounds, and written to
 * the engine log as one line each.
 */
export class AuditTrail {
  private readonly retention: AuditRetention;

  constructor(
    private readonly store: AuditRepository,
    private readonly clock: Clock,
    private readonly log: EngineLogger,
    retention: Partial<AuditRetention> = {},
  ) {
    this.retention = { ...AUDIT_RETENTION_DEFAULTS, ...retention };
  }

  /**
   * Stores the entry and writes its log line. An entry the database refuses is still logged (with
   * id 0 and why); it never fails the request, which was answered already or is about to be.
   */
  record(record: AuditRecord): AuditEntry {
    const at = this.clock.now();
    const row = { ...record, at, fields: record.fields.join(',') };
    try {
      const id = this.store.append(row, at - this.retention.maxAgeMs, this.retention.maxEntries);
      const entry = { ...record, id, at };
      this.logLine(entry);
      return entry;
    } catch (error) {
      const entry = { ...record, id: 0, at };
      this.logLine(entry, error as Error);
      return entry;
    }
  }

  /** One line an entry, its fields under event "audit": a refused request at warn, one not stored at error. */
  private logLine(entry: AuditEntry, notStored?: Error): void {
    const who = `${entry.username ?? '(no user)'} from ${entry.client}`;
    const on = entry.target ? ` on ${entry.target}` : '';
    const message = `audit: ${entry.action}${on} by ${who}: ${entry.outcome} (${entry.status})`;
    const fields = { event: 'audit', ...entry };
    if (notStored) this.log.error({ ...fields, err: notStored }, `${message}; not stored in the audit trail`);
    else this.log[entry.outcome === 'ok' ? 'info' : 'warn'](fields, message);
  }

  list(query: AuditQuery): AuditPage {
    const limit = query.limit ?? AUDIT_PAGE.default;
    const { before, limit: _limit, ...filter } = query;
    const rows = this.store.page(filter, before, limit);
    const last = rows.at(-1);
    return {
      items: rows.map(toEntry),
      next_before: rows.length === limit && last ? last.id : null,
    };
  }
}
