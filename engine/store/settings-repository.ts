import type { Db } from './db';

/**
 * The `settings` table: the engine's small durable values, each a JSON text under its key (the MQTT
 * settings and cursor, the built-in package's first install, a clean stop).
 */
export class SettingsRepository {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = {
      get: db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
      set: db.prepare<[string, string]>(
        'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      remove: db.prepare<[string]>('DELETE FROM settings WHERE key = ?'),
    };
  }

  /** Runs `work` in one transaction. */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  /** The value under the key, parsed; undefined when none is stored. */
  get<T>(key: string): T | undefined {
    const row = this.sql.get.get(key);
    return row === undefined ? undefined : (JSON.parse(row.value) as T);
  }

  set(key: string, value: unknown): void {
    this.sql.set.run(key, JSON.stringify(value));
  }

  /** Deletes the value; returns whether there was one. */
  remove(key: string): boolean {
    return this.sql.remove.run(key).changes > 0;
  }
}
