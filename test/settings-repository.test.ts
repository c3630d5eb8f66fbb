import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Db, openDb } from '../engine/store/db';
import { SettingsRepository } from '../engine/store/settings-repository';

let dir: string;
let db: Db;
let repo: SettingsRepository;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-settings-repo-'));
  db = openDb(dir);
  repo = new SettingsRepository(db);
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SettingsRepository', () => {
  it('stores JSON values by key, replaces them and removes them', () => {
    expect(repo.get('mqtt')).toBeUndefined();
    repo.set('mqtt', { enabled: true, url: 'mqtt://x' });
    repo.set('cursor', 7);
    repo.set('cursor', 9);
    expect([repo.get('mqtt'), repo.get<number>('cursor')]).toEqual([{ enabled: true, url: 'mqtt://x' }, 9]);
    expect([repo.remove('cursor'), repo.remove('cursor'), repo.get('cursor')]).toEqual([
      true,
      false,
      undefined,
    ]);
  });

  it('keeps nothing of a transaction that fails', () => {
    repo.set('kept', 1);
    expect(() =>
      repo.transaction(() => {
        repo.set('kept', 2);
        repo.remove('kept');
        throw new Error('disk full');
      }),
    ).toThrow('disk full');
    expect(repo.get('kept')).toBe(1);
  });
});
