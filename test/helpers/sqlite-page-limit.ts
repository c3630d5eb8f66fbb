import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';

/**
 * Preloaded (--import) into an engine process when a test cannot mount a small tmpfs (SmallDisk):
 * SQLite's own page limit stands in for a full disk. When the file <data-dir>.full appears, the
 * database is vacuumed (SQLite would otherwise take pages from its free list) and every connection
 * of the engine gets max_page_count at the database's size, so a write that needs a page more fails
 * with a real SQLITE_FULL; once the file is gone, the limit is lifted. Other files are not limited.
 */
const at = process.argv.indexOf('--data-dir');
if (at < 0) throw new Error('sqlite-page-limit: the engine was started without --data-dir');
const flag = `${resolve(process.argv[at + 1] as string)}.full`;
const NO_LIMIT = 4294967294;

// Every connection the engine opens sets its pragmas first: that is where it is seen.
const connections = new Set<Database.Database>();
const pragma = Database.prototype.pragma;
Database.prototype.pragma = function (this: Database.Database, ...args: Parameters<typeof pragma>) {
  connections.add(this);
  return pragma.apply(this, args);
};

let limited = false;
setInterval(() => {
  const full = existsSync(flag);
  if (!full && !limited) return;
  if (full && !limited) [...connections].find((db) => db.open)?.exec('VACUUM');
  for (const db of connections) {
    if (!db.open) connections.delete(db);
    // A limit below the current size is taken as the current size.
    else pragma.call(db, `max_page_count = ${full ? 1 : NO_LIMIT}`);
  }
  limited = full;
}, 20).unref();
