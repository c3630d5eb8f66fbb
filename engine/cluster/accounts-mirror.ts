import type { AccountChanges } from '../auth/account-store';
import type { AccountsRepository, TokenRow } from '../auth/accounts-repository';

/**
 * The keys of the site's accounts bucket (vc_accounts): a user under user.<name, base64url> (KV keys
 * take few characters), a token under token.<its SHA-256 hash> (never the token itself), the site's
 * stream-token key, and shared settings under settings.<name>.
 */
export const userKey = (username: string) => `user.${Buffer.from(username).toString('base64url')}`;
export const tokenKey = (tokenHash: string) => `token.${tokenHash}`;
export const STREAM_KEY = 'stream_key';
export const settingKey = (name: string) => `settings.${name}`;
/**
 * Rewritten by each node as it starts and after each purge of deletion markers: its revision is one
 * the bucket surely still holds, so a watch that delivered it has caught up.
 */
export const SYNC_KEY = 'sync';

export interface UserRecord {
  password_hash: string;
  updated_at: number;
}

/**
 * A token as the site keeps it. `user_rev` is the revision of its user's entry when it was issued: a
 * token issued against a password that has been changed since (on another node, in the same instant)
 * is stale, whatever order its entry arrives in.
 */
export interface TokenRecord extends TokenRow {
  created_at: number;
  user_rev: number;
}

/** One entry of the bucket as a watch delivers it. */
export interface MirrorEntry {
  key: string;
  revision: number;
  operation: 'PUT' | 'DEL' | 'PURGE';
  /** The entry's value, parsed (PUT only). */
  value?: unknown;
}

/**
 * Copies the site's accounts into the node's own database, entry by entry in the bucket's order, so
 * that every request's token check stays a local read. A password that changed, or a token deleted
 * (signed out, or revoked with its user's password), ends what it held open on this node.
 */
export class AccountsMirror {
  /** The revision of each user's entry: tokens issued before it are stale. */
  private readonly userRevisions = new Map<string, number>();
  private readonly settings = new Map<string, unknown>();
  private readonly settingListeners = new Map<string, (value: unknown) => void>();
  /** The last revision applied: the bucket is mirrored up to here. */
  applied = 0;
  /** While set (a copy of the whole bucket), the tokens it delivered. */
  seen?: Set<string>;
  changes?: AccountChanges;

  constructor(private readonly rows: AccountsRepository) {}

  apply(entry: MirrorEntry): void {
    this.applied = Math.max(this.applied, entry.revision);
    const dot = entry.key.indexOf('.');
    const kind = entry.key.slice(0, dot);
    const id = entry.key.slice(dot + 1);
    const put = entry.operation === 'PUT';
    if (kind === 'user' && put)
      this.takeUser(Buffer.from(id, 'base64url').toString(), entry.value as UserRecord, entry.revision);
    else if (kind === 'token' && put) {
      if (this.takeToken(id, entry.value as TokenRecord)) this.seen?.add(id);
    } else if (kind === 'token') this.tokenGone(id);
    else if (kind === 'settings' && put) {
      this.settings.set(id, entry.value);
      this.settingListeners.get(id)?.(entry.value);
    }
  }

  /** The revision of the user's entry as last seen; 0 when the site has not been seen to have it. */
  userRevision(username: string): number {
    return this.userRevisions.get(username) ?? 0;
  }

  /** A user entry this node wrote itself: tokens issued from now on carry its revision. */
  wroteUser(username: string, revision: number): void {
    this.userRevisions.set(username, Math.max(revision, this.userRevision(username)));
  }

  /** Whether a token of the site still stands against its user's current password. */
  current(record: TokenRecord): boolean {
    return record.user_rev >= this.userRevision(record.username);
  }

  /** Takes a token the site has into the node's database (a user it lacks comes first); whether it did. */
  takeToken(tokenHash: string, record: TokenRecord): boolean {
    if (!this.current(record) || this.rows.passwordHash(record.username) === undefined) return false;
    this.rows.insertToken(tokenHash, record.username, record.created_at, record.expires_at);
    return true;
  }

  /** The shared setting as last seen, and each change after it, go to `listener`. */
  onSetting(name: string, listener: (value: unknown) => void): void {
    this.settingListeners.set(name, listener);
    if (this.settings.has(name)) listener(this.settings.get(name));
  }

  /** Takes the site's user at a revision: a changed password replaces this node's, its tokens with it. */
  takeUser(username: string, record: UserRecord, revision: number): void {
    this.userRevisions.set(username, Math.max(revision, this.userRevision(username)));
    const local = this.rows.passwordHash(username);
    if (local === record.password_hash) return;
    // Its tokens go with the old password, in the same transaction.
    this.rows.setPassword(username, record.password_hash, record.updated_at);
    if (local !== undefined) this.changes?.passwordChanged(username);
  }

  private tokenGone(tokenHash: string): void {
    this.rows.deleteToken(tokenHash);
    this.changes?.tokenRevoked(tokenHash);
  }
}
