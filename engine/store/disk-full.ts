import type { Clock, TimerHandle } from '../clock';

/** How often a write that a full disk held back is tried again. */
export const DISK_RETRY_MS = 5_000;

/**
 * SQLite's SQLITE_FULL (a full disk, or max_page_count reached), SQLITE_IOERR_SHMSIZE (no room to
 * grow its shared-memory file) and the system's ENOSPC / EDQUOT (files).
 */
const FULL_CODES = new Set(['SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE', 'ENOSPC', 'EDQUOT']);

/**
 * Whether an error means the data disk has no room left. The one place that decides it: the API
 * answers such errors with 507 (50701), background writers wait for space on them.
 */
export function isDiskFull(error: unknown): boolean {
  return FULL_CODES.has((error as { code?: unknown } | null)?.code as string);
}

/** Runs a write that may as well wait for its next turn (a purge): false, not thrown, on a full disk. */
export function writeUnlessFull(write: () => void): boolean {
  try {
    write();
    return true;
  } catch (error) {
    if (!isDiskFull(error)) throw error;
    return false;
  }
}

/**
 * Background writes that a full disk must neither lose nor turn into a crash (a task's status, the
 * end of an optimization run). Each is tried at once; one that fails for want of space is kept, the
 * latest under its key replacing an older one, and tried again every retryMs until it lands.
 */
export class SpaceWaiter {
  private readonly waiting = new Map<string, () => void>();
  private timer?: TimerHandle;

  constructor(
    private readonly clock: Clock,
    /** A kept write that failed for another reason on a retry; it is not tried again. */
    private readonly onError: (error: unknown) => void,
    private readonly retryMs = DISK_RETRY_MS,
    /** A kept write that landed on a retry (not one that landed at once). */
    private readonly onLanded: (key: string) => void = () => undefined,
  ) {}

  /** Writes now; false when the disk is full and the write waits. Other errors are thrown. */
  write(key: string, write: () => void): boolean {
    this.waiting.delete(key);
    if (writeUnlessFull(write)) return true;
    this.waiting.set(key, write);
    this.timer ??= this.clock.setTimeout(() => this.retry(), this.retryMs);
    return false;
  }

  /** Drops the write waiting under the key: a newer decision made it moot. */
  forget(key: string): void {
    this.waiting.delete(key);
  }

  /** Writes waiting for space. */
  get size(): number {
    return this.waiting.size;
  }

  /** Stops retrying; what still waits is dropped. */
  close(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting.clear();
  }

  private retry(): void {
    this.timer = undefined;
    for (const [key, write] of this.waiting) {
      try {
        write();
      } catch (error) {
        if (isDiskFull(error)) break;
        this.waiting.delete(key);
        this.onError(error);
        continue;
      }
      this.waiting.delete(key);
      this.onLanded(key);
    }
    if (this.waiting.size > 0) this.timer = this.clock.setTimeout(() => this.retry(), this.retryMs);
  }
}
