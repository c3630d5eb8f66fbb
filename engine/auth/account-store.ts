import type { TokenRow } from './accounts-repository';

/**
 * Where users and their bearer tokens (by SHA-256 hash only) live. A single workstation keeps them in
 * its SQLite database (AccountsRepository); a cluster node in the site's store, mirrored into its
 * SQLite (engine/cluster/site-accounts.ts), so that a token checked on any node is the same token.
 * Reads are synchronous (from the local database: every request checks a token); writes may wait for
 * the site.
 */
export interface AccountStore {
  /** The user's password hash; undefined when there is no such user. */
  passwordHash(username: string): string | undefined;
  /** Creates the user or replaces its password, and revokes its tokens. */
  setPassword(username: string, passwordHash: string, now: number): void | Promise<void>;
  /** Creates the user unless the store already has it (another node may have made it); whether it did. */
  createUser(username: string, passwordHash: string, now: number): boolean | Promise<boolean>;
  token(tokenHash: string): TokenRow | undefined;
  /**
   * A token token() does not know, looked for where else it may be (the site: another node issued it
   * a moment ago and its copy has not arrived here yet); undefined when nowhere.
   */
  findToken?(tokenHash: string): Promise<TokenRow | undefined>;
  insertToken(
    tokenHash: string,
    username: string,
    createdAt: number,
    expiresAt: number,
  ): void | Promise<void>;
  deleteToken(tokenHash: string): void | Promise<void>;
  /** Tells of changes made elsewhere (on another node), whose held answers must end here too. */
  watch?(changes: AccountChanges): void;
}

/** Changes another node made: what its tokens held open here ends. */
export interface AccountChanges {
  tokenRevoked(tokenHash: string): void;
  passwordChanged(username: string): void;
}
