import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock';
import { DomainError } from '../domain-error';
import type { AccountStore } from './account-store';
import {
  type LoginAttempt,
  LoginCountBusy,
  LoginLimiter,
  type LoginLimits,
  type SharedLoginCount,
} from './login-limiter';
import { passwordProblem } from './password-policy';
import { decoyHash, HasherBusyError, type HasherLimits, PasswordHasher } from './passwords';
import { type HoldEnd, TokenHolds } from './token-holds';

export const ADMIN_USER = 'admin';
export const DEFAULT_TOKEN_LIFETIME_S = 24 * 60 * 60;

// Opaque bearer tokens: 32 random bytes (256 bits), base64url, 43 characters.
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export type TokenCheck =
  | { ok: true; username: string; tokenHash: string }
  | { ok: false; reason: 'malformed' | 'unknown' | 'expired' };

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface AccountsOptions {
  tokenLifetimeS?: number;
  /** Limits of failed logins and of the password hasher (defaults in login-limiter.ts, passwords.ts). */
  login?: Partial<LoginLimits & HasherLimits>;
  /** The hasher to use instead of one built from `login`. */
  hasher?: PasswordHasher;
  /** Called after an existing user's password was changed. */
  onPasswordChange?: (username: string) => void;
  /** Whether the user still has the random password of a first start (its file is still there). */
  hasInitialPassword?: (username: string) => boolean;
  /** Failed logins counted with the other nodes (cluster mode), besides this node's own count. */
  sharedLogins?: SharedLoginCount;
}

/** Why a login or a password change was refused; engine/api/domain-errors.ts maps each to its envelope code. */
export type AuthErrorKind =
  | 'auth.bad_credentials'
  | 'auth.too_many_logins'
  | 'auth.weak_password'
  | 'auth.wrong_current_password';

const tooManyAttempts = (retryAfterMs: number, why: string) => {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new DomainError<AuthErrorKind>('auth.too_many_logins', `${why}; retry in ${seconds} s`, {
    retryAfterS: seconds,
  });
};

const busy = () => tooManyAttempts(1000, 'the engine is checking too many passwords at once');
const tooManyFailed = (retryAfterMs: number) =>
  tooManyAttempts(retryAfterMs, 'too many failed logins from this address or for this user');

/**
 * Users and their bearer tokens; tokens are stored only as SHA-256 hashes, in the node's database or,
 * in cluster mode, the site's (see AccountStore).
 */
export class Accounts {
  private readonly tokenLifetimeS: number;
  private readonly hasher: PasswordHasher;
  private readonly logins: LoginLimiter;
  private readonly decoy = decoyHash();
  private readonly holds: TokenHolds;

  constructor(
    private readonly store: AccountStore,
    private readonly clock: Clock,
    private readonly options: AccountsOptions = {},
  ) {
    this.tokenLifetimeS = options.tokenLifetimeS ?? DEFAULT_TOKEN_LIFETIME_S;
    this.hasher = options.hasher ?? new PasswordHasher(options.login);
    this.logins = new LoginLimiter(clock, options.login);
    this.holds = new TokenHolds(clock);
    // A revocation or password change made on another node ends what the tokens hold open here.
    store.watch?.({
      tokenRevoked: (tokenHash) => this.holds.revokeToken(tokenHash),
      passwordChanged: (username) => {
        this.holds.revokeUser(username);
        options.onPasswordChange?.(username);
      },
    });
  }

  hasUser(username: string): boolean {
    return this.store.passwordHash(username) !== undefined;
  }

  /**
   * Creates or replaces a user's password, refused when the password policy refuses it; a reset also
   * revokes the user's tokens and ends what they hold open. The way in for who holds no password (the desktop main process, a
   * first start): a signed-in user changes its own with changePassword.
   */
  async setPassword(username: string, password: string, current?: string): Promise<void> {
    const hash = await this.hashOf(username, password, current);
    const existed = this.hasUser(username);
    await this.store.setPassword(username, hash, this.clock.now());
    if (!existed) return;
    this.holds.revokeUser(username);
    this.options.onPasswordChange?.(username);
  }

  /**
   * Creates a user that the store lacks (a first start's admin); false, changing nothing, when the
   * store has it, which in cluster mode may mean another node of the site made it first.
   */
  async createUser(username: string, password: string): Promise<boolean> {
    return this.store.createUser(username, await this.hashOf(username, password), this.clock.now());
  }

  /** The hash of a password the policy accepts. */
  private async hashOf(username: string, password: string, current?: string): Promise<string> {
    const problem = passwordProblem(password, username, current);
    if (problem)
      throw new DomainError<AuthErrorKind>('auth.weak_password', `body.password: ${problem}`, {
        field: 'password',
      });
    return this.hasher.hash(password).catch((error: unknown) => {
      throw error instanceof HasherBusyError ? busy() : error;
    });
  }

  /** One scrypt whether or not the user exists, so the answer time does not tell which users exist. */
  checkPassword(username: string, password: string): Promise<boolean> {
    return this.hasher.verify(password, this.store.passwordHash(username) ?? this.decoy);
  }

  /**
   * A signed-in user's change of its own password, which needs the current one: a token alone (a
   * stolen one, a page that uses the console's) cannot take the account over. A wrong current
   * password counts as a failed login of the user from that client, so this is no way around the
   * login limits.
   */
  async changePassword(username: string, current: string, password: string, client: string): Promise<void> {
    const problem = passwordProblem(password, username, current);
    if (problem)
      throw new DomainError<AuthErrorKind>('auth.weak_password', `body.password: ${problem}`, {
        field: 'password',
      });
    if (!(await this.limitedCheck(username, current, client)))
      throw new DomainError<AuthErrorKind>(
        'auth.wrong_current_password',
        'body.current_password: is not the current password',
        { field: 'current_password' },
      );
    await this.setPassword(username, password, current);
  }

  /**
   * A token for the right password. Failed attempts are limited per client (its address, or the
   * key the caller counts it under) and per username (429 TOO_MANY_LOGINS with Retry-After), checked
   * before any hashing so refused guesses cost nothing.
   */
  async signIn(
    username: string,
    password: string,
    client: string,
  ): Promise<{ token: string; expiresIn: number; initialPassword: boolean }> {
    if (!(await this.limitedCheck(username, password, client)))
      throw new DomainError<AuthErrorKind>('auth.bad_credentials', 'wrong username or password');
    const { token, expiresIn, stored } = this.issueToken(username);
    // Handed out once the site has it, so that every node takes it.
    await stored;
    return { token, expiresIn, initialPassword: this.options.hasInitialPassword?.(username) ?? false };
  }

  /**
   * The password check behind the login limits: a failure counts, a refusal (429) costs no hashing.
   * Counted by this node, then (cluster mode) by the site: a refusal of either refuses.
   */
  private async limitedCheck(username: string, password: string, client: string): Promise<boolean> {
    const existing = this.hasUser(username);
    const local = this.logins.begin(client, username, existing);
    if (!local.ok) throw tooManyFailed(local.retryAfterMs);
    let shared: LoginAttempt | undefined;
    try {
      shared = await this.options.sharedLogins?.begin(client, username, existing);
    } catch (error) {
      local.forget();
      throw error instanceof LoginCountBusy ? busy() : error;
    }
    if (shared && !shared.ok) {
      local.forget();
      throw tooManyFailed(shared.retryAfterMs);
    }
    const forget = () => {
      local.forget();
      shared?.forget();
    };
    let matches: boolean;
    try {
      matches = await this.checkPassword(username, password);
    } catch (error) {
      // Never checked: it does not count as a failure.
      forget();
      throw error instanceof HasherBusyError ? busy() : error;
    }
    if (matches) forget();
    return matches;
  }

  /**
   * A new token, valid on this node at once; `stored` settles once the store holds it everywhere (at
   * once on a single workstation; in cluster mode once the site has it, and rejects, the token
   * withdrawn, when the site did not take it).
   */
  issueToken(username: string): { token: string; expiresIn: number; stored: Promise<void> } {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const stored = Promise.resolve(
      this.store.insertToken(hashToken(token), username, now, now + this.tokenLifetimeS * 1000),
    );
    return { token, expiresIn: this.tokenLifetimeS, stored };
  }

  /**
   * Whether the token is valid: from the local copy, or, for a token it lacks, from wherever else the
   * store looks (in cluster mode the site, once: another node may have issued it a moment ago).
   */
  async checkToken(token: string): Promise<TokenCheck> {
    if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: 'malformed' };
    const tokenHash = hashToken(token);
    const row = this.store.token(tokenHash) ?? (await this.store.findToken?.(tokenHash));
    if (!row) return { ok: false, reason: 'unknown' };
    if (row.expires_at <= this.clock.now()) return { ok: false, reason: 'expired' };
    return { ok: true, username: row.username, tokenHash };
  }

  /**
   * Keeps a long-lived answer (event feed, video socket, streamed download) tied to the token that
   * opened it: `end` runs once, when the token is revoked or expires. Null when the token is no
   * longer valid (revoked since the request was authenticated). The returned function lets go.
   */
  hold(tokenHash: string, end: (why: HoldEnd) => void): (() => void) | null {
    const row = this.store.token(tokenHash);
    if (!row || row.expires_at <= this.clock.now()) return null;
    return this.holds.add(tokenHash, row.username, row.expires_at, end);
  }

  async revokeToken(token: string): Promise<void> {
    const tokenHash = hashToken(token);
    await this.store.deleteToken(tokenHash);
    this.holds.revokeToken(tokenHash);
  }
}
