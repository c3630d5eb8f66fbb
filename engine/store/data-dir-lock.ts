import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeLockedFilePrivate, PRIVATE_DIR_MODE } from './private-dir';

export interface DataDirLock {
  /** The locked file: nothing else in this process may open and close it (makePrivate's `held`). */
  readonly path: string;
  release(): void;
}

const LOCK_FILE = 'engine.lock';

/**
 * Claims the data dir for this engine alone: an open EXCLUSIVE transaction on <data-dir>/engine.lock
 * in SQLite's exclusive locking mode. SQLite's OS lock (fcntl on Linux and macOS, LockFileEx on
 * Windows) keeps out other processes and other connections of this process alike, and the OS drops
 * it when the process dies, kill -9 included, so there is never a stale lock to guess about.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const path = join(dataDir, LOCK_FILE);
  let lock: Database.Database | undefined;
  try {
    // No busy timeout: a second engine is refused at once rather than waiting for the first to stop.
    lock = new Database(path, { timeout: 0 });
    // The journal in memory: the lock writes nothing to disk, so a full data disk does not stop it.
    lock.pragma('journal_mode = MEMORY');
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
    makeLockedFilePrivate(path);
  } catch (error) {
    lock?.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new Error(
        `the data dir ${dataDir} is in use by another engine; stop that engine first, or give this one another data dir`,
      );
    }
    throw new Error(`cannot lock the data dir ${dataDir} (${LOCK_FILE}: ${(error as Error).message})`);
  }
  const held = lock;
  return { path, release: () => held.close() };
}
