import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccountsRepository } from '../engine/auth/accounts-repository';
import { type Db, openDb } from '../engine/store/db';

let dir: string;
let db: Db;
let repo: AccountsRepository;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-accounts-repo-'));
  db = openDb(dir);
  repo = new AccountsRepository(db);
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('AccountsRepository', () => {
  it('creates a user, replaces its password and revokes only its tokens with it', () => {
    expect(repo.passwordHash('admin')).toBeUndefined();
    repo.setPassword('admin', 'hash-1', 10);
    repo.setPassword('viewer', 'hash-v', 10);
    repo.insertToken('t-admin', 'admin', 11, 100);
    repo.insertToken('t-viewer', 'viewer', 11, 100);
    repo.setPassword('admin', 'hash-2', 20);
    expect(repo.passwordHash('admin')).toBe('hash-2');
    expect([repo.token('t-admin'), repo.token('t-viewer')]).toEqual([
      undefined,
      { username: 'viewer', expires_at: 100 },
    ]);
  });

  it('deletes one token, and every token expired at a time', () => {
    repo.setPassword('admin', 'hash', 0);
    repo.insertToken('early', 'admin', 0, 50);
    repo.insertToken('at', 'admin', 0, 60);
    repo.insertToken('late', 'admin', 0, 70);
    repo.insertToken('gone', 'admin', 0, 70);
    repo.deleteToken('gone');
    expect(repo.deleteExpiredTokens(60)).toBe(2);
    expect(['early', 'at', 'late', 'gone'].map((hash) => repo.token(hash)?.expires_at)).toEqual([
      undefined,
      undefined,
      70,
      undefined,
    ]);
  });
});
