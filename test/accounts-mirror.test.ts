import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountStore } from '../engine/auth/account-store';
import { Accounts } from '../engine/auth/accounts';
import { AccountsRepository } from '../engine/auth/accounts-repository';
import { ManualClock } from '../engine/clock';
import {
  AccountsMirror,
  type MirrorEntry,
  settingKey,
  type TokenRecord,
  tokenKey,
  userKey,
} from '../engine/cluster/accounts-mirror';
import { type Db, openDb } from '../engine/store/db';

// The mirror of the site's accounts bucket into a node's real SQLite database, fed the entries a KV
// watch delivers (NATS itself: test/cluster-accounts.test.ts).
let dir: string;
let db: Db;
let rows: AccountsRepository;
let mirror: AccountsMirror;
let revision = 0;

const put = (key: string, value: unknown): MirrorEntry => ({
  key,
  value,
  operation: 'PUT',
  revision: ++revision,
});
const del = (key: string): MirrorEntry => ({ key, operation: 'DEL', revision: ++revision });
const user = (name: string, hash: string) => put(userKey(name), { password_hash: hash, updated_at: 1 });
const token = (hash: string, record: Partial<TokenRecord> & { user_rev: number }) =>
  put(tokenKey(hash), { username: 'admin', created_at: 1, expires_at: 10_000, ...record });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-accounts-mirror-'));
  db = openDb(dir);
  rows = new AccountsRepository(db);
  mirror = new AccountsMirror(rows);
  revision = 0;
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('AccountsMirror', () => {
  it('copies users and tokens in the order of the bucket, and a deleted token goes', () => {
    const admin = user('admin', 'hash-1');
    mirror.apply(admin);
    mirror.apply(token('t1', { user_rev: admin.revision }));
    mirror.apply(token('t2', { user_rev: admin.revision }));
    expect(rows.passwordHash('admin')).toBe('hash-1');
    expect([rows.token('t1'), rows.token('t2')]).toEqual([
      { username: 'admin', expires_at: 10_000 },
      { username: 'admin', expires_at: 10_000 },
    ]);
    mirror.apply(del(tokenKey('t1')));
    expect([rows.token('t1'), rows.token('t2')?.username]).toEqual([undefined, 'admin']);
    expect(mirror.applied).toBe(revision);
  });

  it('keys users by base64url, so any name fits a KV key', () => {
    mirror.apply(user('ops team/ünïcode', 'hash-u'));
    expect(userKey('ops team/ünïcode')).toMatch(/^user\.[A-Za-z0-9_-]+$/);
    expect(rows.passwordHash('ops team/ünïcode')).toBe('hash-u');
  });

  it("a changed password drops the user's tokens; a token issued against the old password stays out", () => {
    const first = user('admin', 'hash-1');
    mirror.apply(first);
    mirror.apply(token('old', { user_rev: first.revision }));
    mirror.apply(user('admin', 'hash-2'));
    expect(rows.token('old')).toBeUndefined();
    // Issued on another node against the old password, its entry arriving after the change.
    mirror.apply(token('late', { user_rev: first.revision }));
    expect(rows.token('late')).toBeUndefined();
    expect(
      mirror.current({ username: 'admin', created_at: 1, expires_at: 2, user_rev: first.revision }),
    ).toBe(false);
  });

  it('the same password again changes nothing (a node reading back its own write)', () => {
    const admin = user('admin', 'hash-1');
    mirror.apply(admin);
    mirror.apply(token('t', { user_rev: admin.revision }));
    mirror.apply(user('admin', 'hash-1'));
    expect(rows.token('t')?.username).toBe('admin');
  });

  it('hands shared settings to their listener, the last one at once', () => {
    const seen: unknown[] = [];
    mirror.apply(put(settingKey('mqtt'), { url: 'mqtt://a' }));
    mirror.onSetting('mqtt', (value) => seen.push(value));
    mirror.apply(put(settingKey('mqtt'), { url: 'mqtt://b' }));
    expect(seen).toEqual([{ url: 'mqtt://a' }, { url: 'mqtt://b' }]);
  });
});

describe('Accounts over a mirrored store', () => {
  /** The local part of the site's store: reads from the mirror's database, as SiteAccounts does. */
  const localStore = (): AccountStore => ({
    passwordHash: (name) => rows.passwordHash(name),
    setPassword: (name, hash, now) => rows.setPassword(name, hash, now),
    createUser: (name, hash, now) => rows.createUser(name, hash, now),
    token: (hash) => rows.token(hash),
    insertToken: (hash, name, at, expires) => rows.insertToken(hash, name, at, expires),
    deleteToken: (hash) => rows.deleteToken(hash),
    watch: (changes) => {
      mirror.changes = changes;
    },
  });

  it('ends what a token holds open when another node revokes it or changes its password', async () => {
    const clock = new ManualClock(1_000);
    const accounts = new Accounts(localStore(), clock);
    const admin = user('admin', 'hash-1');
    mirror.apply(admin);
    const one = accounts.issueToken('admin');
    const two = accounts.issueToken('admin');
    const check = async (t: string) => {
      const result = await accounts.checkToken(t);
      return result.ok ? result.tokenHash : '';
    };
    const ended: string[] = [];
    accounts.hold(await check(one.token), (why) => ended.push(`one ${why}`));
    accounts.hold(await check(two.token), (why) => ended.push(`two ${why}`));
    mirror.apply(del(tokenKey(await check(one.token))));
    expect(ended).toEqual(['one revoked']);
    expect((await accounts.checkToken(one.token)).ok).toBe(false);
    mirror.apply(user('admin', 'hash-2'));
    expect(ended).toEqual(['one revoked', 'two revoked']);
    expect(await accounts.checkToken(two.token)).toEqual({ ok: false, reason: 'unknown' });
  });

  it('looks a token it lacks up where the store says, and refuses it when found nowhere', async () => {
    const clock = new ManualClock(1_000);
    mirror.apply(user('admin', 'hash-1'));
    const looked: string[] = [];
    const accounts = new Accounts(
      {
        ...localStore(),
        findToken: async (hash) => {
          looked.push(hash);
          return hash === looked[0] ? { username: 'admin', expires_at: 5_000 } : undefined;
        },
      },
      clock,
    );
    const elsewhere = 'A'.repeat(43);
    expect(await accounts.checkToken(elsewhere)).toMatchObject({ ok: true, username: 'admin' });
    expect(await accounts.checkToken('B'.repeat(43))).toEqual({ ok: false, reason: 'unknown' });
    expect(await accounts.checkToken('short')).toEqual({ ok: false, reason: 'malformed' });
    expect(looked).toHaveLength(2);
  });
});
