import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
} from 'node:fs';
import { join } from 'node:path';

/** The data dir holds the admin's password hash, MQTT and callback secrets, snapshots and live video. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** What the engine's process creates from its start on: files 0600, folders 0700 (cli.ts sets it). */
export const PRIVATE_UMASK = 0o077;

/** Windows has no such modes: Node's chmod there only sets or clears the read-only flag. */
const HAS_MODES = process.platform !== 'win32';

/**
 * Makes the data dir the engine's user's alone: creates it 0700, and gives every folder already in
 * it 0700 and every file 0600 (what an older engine, a copied backup or a loose umask left). A link
 * is never followed, so nothing outside the data dir changes; each entry is opened without following
 * one and changed through its descriptor, so a link put in its place meanwhile changes nothing either.
 * Returns the paths it could not change (owned by another user), for the caller to warn about.
 * `held`: files this process holds a lock on, left alone, since closing any descriptor of a file
 * drops the process's POSIX (fcntl) locks on it: the data-dir lock would be gone.
 */
export function makePrivate(dataDir: string, held: readonly string[] = []): string[] {
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (!HAS_MODES) return [];
  const refused: string[] = [];
  const visit = (path: string) => {
    const isDirectory = restrict(path, refused);
    if (!isDirectory) return;
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const entryPath = join(path, entry.name);
      if ((entry.isDirectory() || entry.isFile()) && !held.includes(entryPath)) visit(entryPath);
    }
  };
  visit(dataDir);
  return refused;
}

/**
 * Makes a file the engine holds a lock on owner-only, by its path: opening and closing a descriptor
 * of it would drop the lock (see makePrivate's `held`).
 */
export function makeLockedFilePrivate(path: string): void {
  if (HAS_MODES) chmodSync(path, PRIVATE_FILE_MODE);
}

/** Sets one entry's mode through a descriptor; true when it is a folder to go into. */
function restrict(path: string, refused: string[]): boolean {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO put in a file's place must not hang the start.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    // Gone, a link now, or unreadable: nothing to change here.
    return false;
  }
  try {
    const stat = fstatSync(fd);
    const mode = stat.isDirectory() ? PRIVATE_DIR_MODE : stat.isFile() ? PRIVATE_FILE_MODE : null;
    if (mode === null) return false;
    if ((stat.mode & 0o777) !== mode) {
      try {
        fchmodSync(fd, mode);
      } catch {
        refused.push(path);
      }
    }
    return stat.isDirectory();
  } finally {
    closeSync(fd);
  }
}
