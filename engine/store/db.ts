import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isDiskFull } from './disk-full';
import { MIGRATIONS } from './migrations';

export type Db = Database.Database;

const DB_FILE = 'engine.sqlite';
/** What only an engine that ran here leaves in the data dir: without the database, it was lost. */
const KEPT_BESIDE_DB = ['packages', 'optimization', `${DB_FILE}-wal`, `${DB_FILE}-journal`];
/**
 * Room the engine keeps in the data dir (a file of this size) for the one thing a full disk would
 * otherwise stop: opening the database, whose WAL index file takes 32 KiB.
 */
export const DISK_RESERVE_BYTES = 1024 * 1024;
const RESERVE_FILE = 'disk-reserve';
const WHAT_TO_DO =
  'restore engine.sqlite from a backup, or move the data dir away to start afresh (nothing was changed)';

/**
 * Opens the engine's SQLite database in the data dir. WAL with synchronous=FULL: every committed
 * write survives kill -9 and power loss, which matters more here than write throughput.
 * A fresh database is made only where there is none and nothing else says an engine ran here; an
 * existing file that is not this engine's database is refused untouched, never started over.
 * On a full disk the reserve makes room to open; it is made again at a start with room for it.
 */
export function openDb(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true });
  const reserve = join(dataDir, RESERVE_FILE);
  let db: Db;
  try {
    db = openDataDir(dataDir);
  } catch (error) {
    if (!isDiskFull(error) || !existsSync(reserve)) throw error;
    rmSync(reserve);
    return openDataDir(dataDir);
  }
  keepReserve(reserve);
  return db;
}

function openDataDir(dataDir: string): Db {
  const file = join(dataDir, DB_FILE);
  if (statSync(file, { throwIfNoEntry: false })) checkEngineDb(file);
  else createDb(dataDir, file);
  const db = new Database(file, { fileMustExist: true });
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

/** Refuses a database file that is empty, unreadable or another program's, reading it only. */
function checkEngineDb(file: string): void {
  let ours: boolean;
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      ours =
        db
          .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
          .get() !== undefined;
    } finally {
      db.close();
    }
  } catch (error) {
    if (isDiskFull(error)) throw error;
    throw new Error(`${file} cannot be read (${(error as Error).message}): ${WHAT_TO_DO}`);
  }
  if (!ours) {
    const { size } = statSync(file);
    throw new Error(`${file} (${size} bytes) is empty or not this engine's database: ${WHAT_TO_DO}`);
  }
}

/**
 * A first start: the schema is built under another name and renamed into place, so engine.sqlite
 * exists only once it holds the schema, and a start killed midway never leaves one to refuse.
 */
function createDb(dataDir: string, file: string): void {
  const left = KEPT_BESIDE_DB.filter((name) => {
    const path = join(dataDir, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat !== undefined && (!stat.isDirectory() || readdirSync(path).length > 0);
  });
  if (left.length > 0) {
    throw new Error(
      `the data dir ${dataDir} has ${left.join(', ')} but no ${DB_FILE}: the database was lost or moved; ${WHAT_TO_DO}`,
    );
  }
  const building = `${file}.new`;
  rmSync(building, { force: true });
  rmSync(`${building}-journal`, { force: true });
  const db = new Database(building);
  try {
    migrate(db);
  } finally {
    db.close();
  }
  renameSync(building, file);
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
