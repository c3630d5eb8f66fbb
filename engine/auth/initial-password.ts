import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file in the data dir that holds the random admin password of a first start. */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

/**
 * Writes the first start's random admin password where only the engine's user can read it (0600),
 * instead of into a log that persists; returns the file's path. A file already there (a start that
 * died before creating the account) is replaced, never followed if it is a link.
 */
export function writeInitialPassword(dataDir: string, password: string): string {
  const file = join(dataDir, INITIAL_PASSWORD_FILE);
  rmSync(file, { force: true });
  writeFileSync(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return file;
}

/** Once the admin chose a password of its own, the first one is no secret worth keeping. */
export function removeInitialPassword(dataDir: string): void {
  rmSync(join(dataDir, INITIAL_PASSWORD_FILE), { force: true });
}

/** Whether the first start's random password is still the admin's (its file goes once it is changed). */
export function hasInitialPassword(dataDir: string): boolean {
  return existsSync(join(dataDir, INITIAL_PASSWORD_FILE));
}
