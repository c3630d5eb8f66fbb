import type { Db } from '../store/db';
import type { AccountStore } from './account-store';

/**
 * The `users` table with its child `tokens` (a user's bearer tokens, by SHA-256 hash only; ON DELETE
 * CASCADE), so a password change and the revocation of the user's tokens commit together.
 */
export class AccountsRepository implements AccountStore {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = {
      passwordHash: db.prepare<[string], { password_hash: string }>(
        'SELECT password_hash FROM users WHERE username = ?',
      ),
      users: db.prepare<[], UserRow>('SELECT username, password_hash FROM users ORDER BY username'),
      insertUser: db.prepare<[string, string, number, number]>(
        'INSERT INTO users (username, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      upsertUser: db.prepare<[string, string, number, number]>(
        `INSERT INTO users (username, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(username) DO UPDATE SET password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
      ),
      token: db.prepare<[string], TokenRow>('SELECT username, expires_at FROM tokens WHERE token_hash = ?'),
      insertToken: db.prepare<[string, string, number, number]>(
        'INSERT INTO tokens (token_hash, username, created_at, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      tokensOf: db.prepare<[string], { token_hash: string }>(
        'SELECT token_hash FROM tokens WHERE username = ?',
      ),
      tokens: db.prepare<[number], TokenRow & { token_hash: string; created_at: number }>(
        'SELECT token_hash, username, created_at, expires_at FROM tokens WHERE expires_at > ?',
      ),
      expired: db.prepare<[number], { token_hash: string }>(
        'SELECT token_hash FROM tokens WHERE expires_at <= ?',
      ),
      deleteTokensOf: db.prepare<[string]>('DELETE FROM tokens WHERE username = ?'),
      deleteToken: db.prepare<[string]>('DELETE FROM tokens WHERE token_hash = ?'),
      deleteExpired: db.prepare<[number]>('DELETE FROM tokens WHERE expires_at <= ?'),
    };
  }

  /** The user's password hash; undefined when there is no such user. */
  passwordHash(username: string): string | undefined {
    return this.sql.passwordHash.get(username)?.password_hash;
  }

  /** Creates the user or replaces its password, and revokes its tokens, in one transaction. */
  setPassword(username: string, passwordHash: string, now: number): void {
    this.db.transaction(() => {
      this.sql.upsertUser.run(username, passwordHash, now, now);
      this.sql.deleteTokensOf.run(username);
    })();
  }

  /** Creates the user unless it exists; whether it did. */
  createUser(username: string, passwordHash: string, now: number): boolean {
    return this.sql.insertUser.run(username, passwordHash, now, now).changes > 0;
  }

  /** Every user with its password hash. */
  users(): UserRow[] {
    return this.sql.users.all();
  }

  token(tokenHash: string): TokenRow | undefined {
    return this.sql.token.get(tokenHash);
  }

  insertToken(tokenHash: string, username: string, createdAt: number, expiresAt: number): void {
    this.sql.insertToken.run(tokenHash, username, createdAt, expiresAt);
  }

  deleteToken(tokenHash: string): void {
    this.sql.deleteToken.run(tokenHash);
  }

  /** The hashes of the user's tokens. */
  tokensOf(username: string): string[] {
    return this.sql.tokensOf.all(username).map((row) => row.token_hash);
  }

  /** The tokens not expired at `now`, with their hashes. */
  liveTokens(now: number): Array<TokenRow & { token_hash: string; created_at: number }> {
    return this.sql.tokens.all(now);
  }

  /** The hashes of the tokens expired at `now`. */
  expiredTokens(now: number): string[] {
    return this.sql.expired.all(now).map((row) => row.token_hash);
  }

  /** Deletes the tokens expired at `now`; returns how many. */
  deleteExpiredTokens(now: number): number {
    return this.sql.deleteExpired.run(now).changes;
  }
}

export interface TokenRow {
  username: string;
  expires_at: number;
}

export interface UserRow {
  username: string;
  password_hash: string;
}
