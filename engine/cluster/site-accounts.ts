import { randomBytes } from 'node:crypto';
import type { Bucket, KvEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import type { AccountChanges, AccountStore } from '../auth/account-store';
import type { AccountsRepository, TokenRow } from '../auth/accounts-repository';
import { STREAM_KEY_BYTES } from '../auth/stream-tokens';
import {
  AccountsMirror,
  type MirrorEntry,
  STREAM_KEY,
  SYNC_KEY,
  settingKey,
  type TokenRecord,
  tokenKey,
  type UserRecord,
  userKey,
} from './accounts-mirror';

/**
 * How often a node compares the bucket's last revision with what its watch delivered: a KV watch
 * stalled 11-22 s after a NATS server was killed or paused (measured), so a watch that stays behind
 * over two looks is started again from where it stopped.
 */
export const MIRROR_CHECK_MS = 2_000;
/** How long a joining node waits for its copy of the site's accounts before it refuses to start. */
export const MIRROR_SYNC_MS = 30_000;
/**
 * Tokens unknown here looked up in the site at once, at most: one request with a made-up token costs
 * one KV read, and a flood of them no more than this many at a time (the others are refused, 401).
 */
export const MAX_TOKEN_LOOKUPS = 16;
/** How often each node deletes the site's expired tokens it knows of (idempotent: any node may). */
export const TOKEN_PURGE_MS = 60 * 60_000;

/**
 * The site's users, tokens (SHA-256 hashes only), stream-token key and shared settings, kept in the
 * JetStream KV bucket vc_accounts: the site's truth. Each node mirrors the bucket into its own
 * database through a watch (AccountsMirror), so a token check stays a local read; writes go to the
 * bucket first, then here. A token not (yet) mirrored is looked up in the bucket once.
 */
export class SiteAccounts implements AccountStore {
  private readonly mirror: AccountsMirror;
  private watcher?: QueuedIterator<KvEntry>;
  private checkTimer?: NodeJS.Timeout;
  private purgeTimer?: NodeJS.Timeout;
  /** The revision applied at the previous check: unchanged while the bucket is ahead means stalled. */
  private appliedAtCheck = 0;
  private lookups = 0;
  private closed = false;
  /** The node left its site: its copy of the accounts is its own now, and nothing goes to the site. */
  private left = false;

  constructor(
    private readonly kv: Bucket,
    private readonly rows: AccountsRepository,
    private readonly log: Logger,
  ) {
    this.mirror = new AccountsMirror(rows);
  }

  watch(changes: AccountChanges): void {
    this.mirror.changes = changes;
  }

  /**
   * Joins the site: brings in this node's users the site lacks (with their password hashes and live
   * tokens), keeps the site's password of a user both have, then mirrors the bucket and waits until
   * the copy has caught up with it. Tokens this node kept that the site no longer has (revoked or
   * purged while it was down) go. Returns the users whose password here the site's replaced.
   */
  async start(): Promise<string[]> {
    const replaced = await this.bringUsersIn();
    const last = await this.kv.put(SYNC_KEY, JSON.stringify({ at: Date.now() }));
    const seen = new Set<string>();
    this.mirror.seen = seen;
    await this.follow();
    // A watch stalled from its start is started again too.
    this.checkTimer = setInterval(() => void this.check(), MIRROR_CHECK_MS);
    const deadline = Date.now() + MIRROR_SYNC_MS;
    while (this.mirror.applied < last) {
      if (Date.now() > deadline)
        throw new Error(
          `cluster: the site's accounts were not copied within ${MIRROR_SYNC_MS / 1000} s (${this.mirror.applied} of ${last})`,
        );
      await new Promise((done) => setTimeout(done, 20));
    }
    this.mirror.seen = undefined;
    for (const { token_hash } of this.rows.liveTokens(0))
      if (!seen.has(token_hash)) this.rows.deleteToken(token_hash);
    await this.purge();
    this.purgeTimer = setInterval(() => void this.purge(), TOKEN_PURGE_MS);
    return replaced;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.checkTimer);
    clearInterval(this.purgeTimer);
    this.watcher?.stop();
  }

  /**
   * The node left its site (its connection is closed): the mirror stops, and from now on the users,
   * tokens and settings it copied are the workstation's own, read and written here only.
   */
  async leave(): Promise<void> {
    this.left = true;
    await this.close();
  }

  /** The site's key for stream and link tokens: made by the first node, read by every other. */
  async streamKey(): Promise<Buffer> {
    const made = randomBytes(STREAM_KEY_BYTES).toString('base64');
    try {
      await this.kv.create(STREAM_KEY, JSON.stringify(made));
      return Buffer.from(made, 'base64');
    } catch (error) {
      const entry = await this.kv.get(STREAM_KEY);
      if (entry?.operation !== 'PUT') throw error;
      return Buffer.from(entry.json<string>(), 'base64');
    }
  }

  /** Shares a setting with every node (each applies it when its watch delivers it). */
  async putSetting(name: string, value: unknown): Promise<void> {
    // Out of the site, the setting is this node's alone: its caller saves it here.
    if (this.left) return;
    await this.kv.put(settingKey(name), JSON.stringify(value));
  }

  /** Gives the site this node's setting unless the site has one already (a joining workstation's). */
  async offerSetting(name: string, value: unknown): Promise<void> {
    await this.kv.create(settingKey(name), JSON.stringify(value)).catch(() => undefined);
  }

  /** The site's setting now and after each change. */
  onSetting(name: string, listener: (value: unknown) => void): void {
    this.mirror.onSetting(name, listener);
  }

  passwordHash(username: string): string | undefined {
    return this.rows.passwordHash(username);
  }

  async setPassword(username: string, passwordHash: string, now: number): Promise<void> {
    if (this.left) return this.rows.setPassword(username, passwordHash, now);
    const record: UserRecord = { password_hash: passwordHash, updated_at: now };
    this.mirror.wroteUser(username, await this.kv.put(userKey(username), JSON.stringify(record)));
    // The user's tokens the site has go; one another node issues meanwhile is stale by its user_rev.
    await Promise.all(this.rows.tokensOf(username).map((hash) => this.kv.delete(tokenKey(hash))));
    this.rows.setPassword(username, passwordHash, now);
  }

  async createUser(username: string, passwordHash: string, now: number): Promise<boolean> {
    if (this.left) return this.rows.createUser(username, passwordHash, now);
    const record: UserRecord = { password_hash: passwordHash, updated_at: now };
    let revision: number;
    try {
      revision = await this.kv.create(userKey(username), JSON.stringify(record));
    } catch (error) {
      // Another node made it first: the mirror brings the site's.
      if ((await this.kv.get(userKey(username)))?.operation === 'PUT') return false;
      throw error;
    }
    this.mirror.wroteUser(username, revision);
    // The mirror may have copied it here already, from this very write.
    this.rows.createUser(username, passwordHash, now);
    return true;
  }

  token(tokenHash: string): TokenRow | undefined {
    return this.rows.token(tokenHash);
  }

  async findToken(tokenHash: string): Promise<TokenRow | undefined> {
    if (this.left || this.lookups >= MAX_TOKEN_LOOKUPS) return undefined;
    this.lookups += 1;
    try {
      const entry = await this.kv.get(tokenKey(tokenHash));
      if (entry?.operation !== 'PUT') return undefined;
      const record = entry.json<TokenRecord>();
      // Its user may not have been mirrored either.
      if (this.rows.passwordHash(record.username) === undefined) {
        const user = await this.kv.get(userKey(record.username));
        if (user?.operation === 'PUT')
          this.mirror.takeUser(record.username, user.json<UserRecord>(), user.revision);
      }
      return this.mirror.takeToken(tokenHash, record) ? this.rows.token(tokenHash) : undefined;
    } catch (error) {
      this.log.warn({ err: error }, 'cluster: a token was refused: the site did not answer its lookup');
      return undefined;
    } finally {
      this.lookups -= 1;
    }
  }

  async insertToken(
    tokenHash: string,
    username: string,
    createdAt: number,
    expiresAt: number,
  ): Promise<void> {
    if (this.left) return this.rows.insertToken(tokenHash, username, createdAt, expiresAt);
    const record: TokenRecord = {
      username,
      created_at: createdAt,
      expires_at: expiresAt,
      user_rev: this.mirror.userRevision(username),
    };
    // Here at once (the desktop's token is used before the site answers); withdrawn if the site refuses it.
    this.rows.insertToken(tokenHash, username, createdAt, expiresAt);
    try {
      await this.kv.create(tokenKey(tokenHash), JSON.stringify(record));
    } catch (error) {
      this.rows.deleteToken(tokenHash);
      throw error;
    }
  }

  async deleteToken(tokenHash: string): Promise<void> {
    if (this.left) return this.rows.deleteToken(tokenHash);
    await this.kv.delete(tokenKey(tokenHash));
    this.rows.deleteToken(tokenHash);
  }

  private async deleteExpiredTokens(now: number): Promise<number> {
    const expired = this.rows.expiredTokens(now);
    await Promise.all(expired.map((hash) => this.kv.delete(tokenKey(hash))));
    return this.rows.deleteExpiredTokens(now);
  }

  /** Each node's users the site lacks go in, with their live tokens; a user both have keeps the site's password. */
  private async bringUsersIn(): Promise<string[]> {
    const replaced: string[] = [];
    const now = Date.now();
    for (const { username, password_hash } of this.rows.users()) {
      const record: UserRecord = { password_hash, updated_at: now };
      try {
        const revision = await this.kv.create(userKey(username), JSON.stringify(record));
        this.mirror.wroteUser(username, revision);
        const tokens = this.rows.liveTokens(now).filter((token) => token.username === username);
        for (const token of tokens)
          await this.kv.create(tokenKey(token.token_hash), JSON.stringify({ ...token, user_rev: revision }));
        this.log.info(`cluster: user "${username}" brought into the site, with ${tokens.length} tokens`);
      } catch (error) {
        const site = await this.kv.get(userKey(username));
        if (site?.operation !== 'PUT') throw error;
        if (site.json<UserRecord>().password_hash === password_hash) continue;
        replaced.push(username);
        this.log.warn(
          `cluster: user "${username}" exists in the site with another password: the site's is kept, this node's password and tokens are dropped`,
        );
      }
    }
    return replaced;
  }

  /** Watches the bucket from the revision after the last one applied (all of it at the start). */
  private async follow(): Promise<void> {
    this.watcher?.stop();
    const from = this.mirror.applied;
    const watcher = await this.kv.watch(from === 0 ? {} : { resumeFromRevision: from + 1 });
    this.watcher = watcher;
    void (async () => {
      try {
        for await (const entry of watcher) this.apply(entry);
      } catch (error) {
        if (!this.closed) this.log.warn({ err: error }, "cluster: the watch of the site's accounts ended");
      }
    })();
  }

  /** Mirrors one entry; one the mirror cannot read is skipped (and said), never the end of the watch. */
  private apply(entry: KvEntry): void {
    try {
      this.mirror.apply(mirrorEntry(entry));
    } catch (error) {
      this.mirror.applied = Math.max(this.mirror.applied, entry.revision);
      this.log.warn({ err: error }, `cluster: the site's accounts entry ${entry.key} was not copied`);
    }
  }

  /** Starts the watch again when the bucket is ahead of it and it delivered nothing since the last look. */
  private async check(): Promise<void> {
    try {
      const last = (await this.kv.status()).streamInfo.state.last_seq;
      const applied = this.mirror.applied;
      const stalled = last > applied && applied === this.appliedAtCheck;
      this.appliedAtCheck = applied;
      if (!stalled || this.closed) return;
      this.log.warn(
        `cluster: the watch of the site's accounts stalled at ${applied} of ${last}; watching again`,
      );
      await this.follow();
    } catch (error) {
      this.log.warn({ err: error }, "cluster: the site's accounts were not checked");
    }
  }

  /**
   * Deletes the expired tokens, and the deletion markers older than a purge period, site-wide; then
   * rewrites the sync key, so the bucket's last revision is one it holds (check() compares with it).
   */
  private async purge(): Promise<void> {
    try {
      await this.deleteExpiredTokens(Date.now());
      await this.kv.purgeDeletes(TOKEN_PURGE_MS);
      await this.kv.put(SYNC_KEY, JSON.stringify({ at: Date.now() }));
    } catch (error) {
      this.log.warn({ err: error }, "cluster: the site's expired tokens were not purged");
    }
  }
}

const mirrorEntry = (entry: KvEntry): MirrorEntry => ({
  key: entry.key,
  revision: entry.revision,
  operation: entry.operation,
  value: entry.operation === 'PUT' ? entry.json() : undefined,
});
