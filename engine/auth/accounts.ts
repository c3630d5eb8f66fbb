import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock';
import type { Db } from '../store/db';
import { hashPassword, verifyPassword } from './passwords';

export const ADMIN_USER = 'admin';
export const DEFAULT_TOKEN_LIFETIME_S = 24 * 60 * 60;

// Opaque bearer tokens: 32 random bytes (256 bits), base64url, 43 characters.
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export type TokenCheck =
  | { ok: true; username: string }
  | { ok: false; reason: 'malformed' | 'unknown' | 'expired' };

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** Users and their bearer tokens; tokens are stored only as SHA-256 hashes. */
export class Accounts {
  private readonly findToken;
  private readonly insertToken;
  private readonly findUser;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly tokenLifetimeS = DEFAULT_TOKEN_LIFETIME_S,
  ) {
    this.findToken = db.prepare<[string], { username: string; expires_at: number }>(
      'SELECT username, expires_at FROM tokens WHERE token_hash = ?',
    );
    this.insertToken = db.prepare(
      'INSERT INTO tokens (token_hash, username, created_at, expires_at) VALUES (?, ?, ?, ?)',
    );
    this.findUser = db.prepare<[string], { password_hash: string }>(
      'SELECT password_hash FROM users WHERE username = ?',
    );
  }

  hasUser(username: string): boolean {
    return this.findUser.get(username) !== undefined;
  }

  /** Creates or replaces a user's password; a reset also revokes the user's tokens. */
  setPassword(username: string, password: string): void {
    const now = this.clock.now();
    const hash = hashPassword(password);
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO users (username, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT(username) DO UPDATE SET password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
        )
        .run(username, hash, now, now);
      this.db.prepare('DELETE FROM tokens WHERE username = ?').run(username);
    })();
  }

  checkPassword(username: string, password: string): boolean {
    const user = this.findUser.get(username);
    // Hash anyway for an unknown user so response time does not reveal which usernames exist.
    if (!user) {
      verifyPassword(password, hashPassword('unknown-user'));
      return false;
    }
    return verifyPassword(password, user.password_hash);
  }

  issueToken(username: string): { token: string; expiresIn: number } {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    this.insertToken.run(hashToken(token), username, now, now + this.tokenLifetimeS * 1000);
    return { token, expiresIn: this.tokenLifetimeS };
  }

  checkToken(token: string): TokenCheck {
    if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: 'malformed' };
    const row = this.findToken.get(hashToken(token));
    if (!row) return { ok: false, reason: 'unknown' };
    if (row.expires_at <= this.clock.now()) return { ok: false, reason: 'expired' };
    return { ok: true, username: row.username };
  }

  revokeToken(token: string): void {
    this.db.prepare('DELETE FROM tokens WHERE token_hash = ?').run(hashToken(token));
  }

  purgeExpiredTokens(): number {
    return this.db.prepare('DELETE FROM tokens WHERE expires_at <= ?').run(this.clock.now()).changes;
  }
}
