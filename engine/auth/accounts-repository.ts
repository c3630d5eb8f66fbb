import type { Db } from '../store/db';

/**
 * The `users` table with its child `tokens` (a user's bearer tokens, by SHA-256 hash only; ON DELETE
 * CASCADE), so a password change and the revocation of the user's tokens commit together.
 */
export class AccountsRepository {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = {
      passwordHash: db.prepare<[string], { password_hash: string }>(
        'SELECT password_hash FROM users WHERE username = ?',
      ),
      upsertUser: db.prepare<[string, string, number, number]>(
        `INSERT INTO users (username, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(username) DO UPDATE SET password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
      ),
      token: db.prepare<[string], TokenRow>('SELECT username, expires_at FROM tokens WHERE token_hash = ?'),
      insertToken: db.prepare<[string, string, number, number]>(
        'INSERT INTO tokens (token_hash, username, created_at, expires_at) VALUES (?, ?, ?, ?)',
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

  token(tokenHash: string): TokenRow | undefined {
    return this.sql.token.get(tokenHash);
  }

  insertToken(tokenHash: string, username: string, createdAt: number, expiresAt: number): void {
    this.sql.insertToken.run(tokenHash, username, createdAt, expiresAt);
  }

  deleteToken(tokenHash: string): void {
    this.sql.deleteToken.run(tokenHash);
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
