import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';

const PAGE_LIMIT_PRELOAD = resolve(import.meta.dirname, 'sqlite-page-limit.ts');

/**
 * A data dir on a disk that a test fills up and frees again. Where the machine lets the test mount
 * (as root), it is a tmpfs of its own, filled by a file up to ENOSPC: every write of the engine
 * there, database and files alike, fails as on a full disk. Where it does not, SQLite's
 * max_page_count stands in (sqlite-page-limit.ts, preloaded into the engine through `nodeArgs`):
 * database writes that need a new page fail with SQLITE_FULL; in-place updates and files do not.
 */
export class SmallDisk {
  readonly dataDir: string;
  private readonly filler: string;

  private constructor(
    private readonly root: string,
    readonly mode: 'tmpfs' | 'page-limit',
  ) {
    this.dataDir = join(root, 'data');
    this.filler = mode === 'tmpfs' ? join(root, 'filler') : `${this.dataDir}.full`;
  }

  static create(sizeMiB: number): SmallDisk {
    const root = mkdtempSync(join(tmpdir(), 'vc-disk-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', root], { stdio: 'pipe' });
      return new SmallDisk(root, 'tmpfs');
    } catch (error) {
      console.info(
        `SmallDisk: no tmpfs can be mounted here (${(error as Error).message.trim()}); ` +
          "SQLite's max_page_count stands in for a full disk",
      );
      return new SmallDisk(root, 'page-limit');
    }
  }

  /** Node flags of an engine process on this disk: the page limit's preload when there is no tmpfs. */
  get nodeArgs(): string[] {
    return this.mode === 'tmpfs' ? [] : ['--import', PAGE_LIMIT_PRELOAD];
  }

  /** From now on the engine's writes fail for want of space. */
  fill(): void {
    if (this.mode === 'page-limit') {
      writeFileSync(this.filler, '');
      return;
    }
    // A checkpointed WAL file would take writes into its old frames for a while: empty it first.
    this.truncateWal();
    const fd = openSync(this.filler, 'a');
    try {
      for (const size of [1024 * 1024, 4096]) {
        const chunk = Buffer.alloc(size, 1);
        try {
          for (;;) writeSync(fd, chunk);
        } catch (error) {
          if ((error as { code?: string }).code !== 'ENOSPC') throw error;
        }
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Space again. */
  free(): void {
    rmSync(this.filler, { force: true });
  }

  /** Unmounts and removes everything; the engine must have stopped. */
  dispose(): void {
    if (this.mode === 'tmpfs') execFileSync('umount', [this.root]);
    rmSync(this.root, { recursive: true, force: true });
  }

  /**
   * Checkpoints the WAL and truncates it to nothing. A checkpoint that a full disk stops half-way is
   * as good: SQLite reuses a WAL's frames only once all of them are in the database.
   */
  private truncateWal(): void {
    const file = join(this.dataDir, 'engine.sqlite');
    if (!existsSync(file)) return;
    const db = new Database(file, { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      if (result?.busy !== 0) throw new Error('SmallDisk: the WAL could not be checkpointed');
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_FULL') throw error;
    } finally {
      db.close();
    }
  }
}
