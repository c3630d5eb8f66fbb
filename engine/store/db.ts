import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isDiskFull } from './disk-full';
import { MIGRATIONS } from './migrations';

export type Db = Database.Database;

/**
 * Room the engine keeps in the data dir (a file of this size) for the one thing a full disk would
 * otherwise stop: opening the database, whose WAL index file takes 32 KiB.
 */
export const DISK_RESERVE_BYTES = 1024 * 1024;
const RESERVE_FILE = 'disk-reserve';

/**
 * Opens the engine's SQLite database in the data dir. WAL with synchronous=FULL: every committed
 * write survives kill -9 and power loss, which matters more here than write throughput. On a full
 * disk the reserve makes room to open; it is made again at a start with room for it.
 */
export function openDb(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'engine.sqlite');
  const reserve = join(dataDir, RESERVE_FILE);
  let db: Db;
  try {
    db = openFile(file);
  } catch (error) {
    if (!isDiskFull(error) || !existsSync(reserve)) throw error;
    rmSync(reserve);
    return openFile(file);
  }
  keepReserve(reserve);
  return db;
}

function openFile(path: string): Db {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Writes the reserve file unless it is there; on a full disk the engine does without it. */
function keepReserve(path: string): void {
  if (existsSync(path)) return;
  try {
    // Random bytes: a compressing file system would store zeros in no space at all.
    writeFileSync(path, randomBytes(DISK_RESERVE_BYTES), { flag: 'wx' });
  } catch (error) {
    rmSync(path, { force: true });
    if (!isDiskFull(error)) throw error;
  }
}

/** Applies each numbered migration once, in order, each inside its own transaction. */
export function migrate(db: Db): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const applied = new Set(
    db
      .prepare('SELECT version FROM schema_migrations')
      .all()
      .map((row) => (row as { version: number }).version),
  );
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
        migration.version,
        Date.now(),
      );
    })();
  }
}
