import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KV, KvEntry } from '@nats-io/kv';
import type { Logger } from 'pino';
import {
  type LoginAttempt,
  LoginCountBusy,
  type LoginLimits,
  type SharedLoginCount,
} from '../auth/login-limiter';
import type { ClusterConnection } from './connection';
import { lostRace, whilePlacing } from './site-store';

/**
 * The site's count of failed logins, so that guesses spread over the nodes meet the same limits as
 * on one node (login-limiter.ts gives the rules; each node keeps its own count as well, and that one
 * decides whenever the site's does not answer). Two KV buckets with compare-and-set counters, one key
 * per client and one per existing user, each a window { start, count }.
 */

/** Clients counted by the site: any address may appear, so this bucket is bounded in bytes. */
export const LOGIN_CLIENTS_BUCKET = 'vc_login_clients';
/** Usernames counted by the site: existing users' only, so made-up names cannot fill it. */
export const LOGIN_USERS_BUCKET = 'vc_login_users';
/**
 * Bytes each bucket holds at most (about 20,000 windows of ~200 bytes each): a flood of client
 * addresses fills the clients' bucket, after which a new client is counted by each node alone
 * (refusals of the others stand; the per-user count, which limits guessing from many addresses,
 * lives in the other bucket). Keys and values are fixed-size: SHA-256 of the name, two numbers.
 */
export const SITE_LOGIN_BUCKET_BYTES = 4 * 1024 * 1024;
/** The largest message stored: a window (a JSON start and count) with the compare-and-set header. */
const MAX_WINDOW_MESSAGE_BYTES = 256;
/**
 * How long a login waits for the site's count before it goes on with the node's alone: a NATS that
 * is slow or unreachable delays logins this much at most, never lets one through without a limit.
 */
export const SITE_LOGIN_WAIT_MS = 1_000;
/** How often a node says that the site's count did not answer, at most. */
const FALLBACK_LOG_MS = 60_000;
/** Logins counted by the site at once, at most; the others are refused as busy (429, as when the password hasher is). */
export const MAX_SITE_LOGIN_CHECKS = 32;
/**
 * Compare-and-set tries of one count: past them (that many other writes of one key won meanwhile,
 * a burst of guesses) the login is refused as busy, never let through uncounted.
 */
const CAS_TRIES = 16;
/** The longest random wait between two compare-and-set tries of one count, ms. */
const MAX_CAS_PAUSE_MS = 32;

interface Window {
  start: number;
  count: number;
}

export interface SiteLoginBuckets {
  clients: KV;
  users: KV;
}

/** Opens (creating on first use) the two buckets; an entry lives a window after its last write. */
export async function openSiteLogins(
  conn: ClusterConnection,
  replicas: number,
  windowMs: number,
): Promise<SiteLoginBuckets> {
  const bucket = (name: string) =>
    whilePlacing(() =>
      conn.kvm.create(name, {
        replicas,
        history: 1,
        ttl: windowMs,
        max_bytes: SITE_LOGIN_BUCKET_BYTES,
        maxValueSize: MAX_WINDOW_MESSAGE_BYTES,
      }),
    );
  const [clients, users] = await Promise.all([bucket(LOGIN_CLIENTS_BUCKET), bucket(LOGIN_USERS_BUCKET)]);
  return { clients, users };
}

/** Keys are a SHA-256 of the client or username: fixed length, KV-safe whatever the name holds. */
const keyOf = (name: string) => createHash('sha256').update(name).digest('base64url');

/** Failed-login counts shared by every node of the site (see the module's comment). */
export class SiteLogins implements SharedLoginCount {
  private checks = 0;
  private loggedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly buckets: SiteLoginBuckets,
    private readonly limits: Pick<LoginLimits, 'windowMs' | 'perClient' | 'perUser'>,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    /** SITE_LOGIN_WAIT_MS; a test that judges the site's counting, not its fallback, waits longer. */
    private readonly waitMs = SITE_LOGIN_WAIT_MS,
  ) {}

  /**
   * Counts an attempt in the site, refused when the site's counts are over the limits (as
   * LoginLimiter.begin decides on one node). An attempt counts from its start, so concurrent guesses
   * on several nodes are limited like a sequence. When the site does not answer within waitMs, the
   * attempt goes on, limited by the node's own count only.
   */
  async begin(client: string, username: string, existingUser: boolean): Promise<LoginAttempt> {
    if (this.checks >= MAX_SITE_LOGIN_CHECKS)
      throw new LoginCountBusy('the site is counting too many logins');
    this.checks += 1;
    const counting = this.count(keyOf(client), existingUser ? keyOf(username) : undefined);
    const answered = new AbortController();
    const late = sleep(this.waitMs, undefined, { signal: answered.signal }).catch(() => undefined);
    try {
      const attempt = await Promise.race([counting, late]);
      if (attempt) return attempt;
      this.fellBack(new Error(`no answer within ${this.waitMs} ms`));
    } catch (error) {
      if (error instanceof LoginCountBusy) throw error;
      this.fellBack(error);
    } finally {
      answered.abort();
      // Counted until the site answers: a flood while NATS is slow stays bounded.
      void counting.catch(() => undefined).finally(() => (this.checks -= 1));
    }
    // What the site counts after this stays counted until its window ends.
    return { ok: true, forget: () => undefined };
  }

  /** Said at most once a FALLBACK_LOG_MS: a flood of logins while NATS is down is one line. */
  private fellBack(error: unknown): void {
    if (this.now() - this.loggedAt < FALLBACK_LOG_MS) return;
    this.loggedAt = this.now();
    this.log.warn(
      { err: error },
      "cluster: the site's failed-login count did not answer; this node's count decides",
    );
  }

  private async count(clientKey: string, userKey: string | undefined): Promise<LoginAttempt> {
    const { clients, users } = this.buckets;
    const { perClient, perUser } = this.limits;
    const client = await this.add(clients, clientKey);
    if (client.count > perClient) {
      await this.remove(clients, clientKey);
      return { ok: false, retryAfterMs: this.endOf(client) };
    }
    const user = userKey === undefined ? undefined : await this.add(users, userKey);
    // Over the user's limit, only a client without a failure in its window may still try.
    if (user && userKey !== undefined && user.count > perUser && client.count > 1) {
      await Promise.all([this.remove(clients, clientKey), this.remove(users, userKey)]);
      return { ok: false, retryAfterMs: Math.min(this.endOf(user), this.endOf(client)) };
    }
    return {
      ok: true,
      forget: () => {
        // Best effort: a count that is not taken back ends with its window.
        void Promise.all([
          this.remove(clients, clientKey),
          userKey === undefined ? undefined : this.remove(users, userKey),
        ]).catch((error) =>
          this.log.warn({ err: error }, "cluster: a login was not taken off the site's count"),
        );
      },
    };
  }

  /** Adds an attempt to the key's window (a new window when it has none live); the window after it. */
  private add(kv: KV, key: string): Promise<Window> {
    return this.change(
      kv,
      key,
      (live): Window =>
        live ? { start: live.start, count: live.count + 1 } : { start: this.now(), count: 1 },
    );
  }

  /** Takes an attempt back off the key's live window. */
  private async remove(kv: KV, key: string): Promise<void> {
    await this.change(kv, key, (live) =>
      live && live.count > 0 ? { start: live.start, count: live.count - 1 } : undefined,
    );
  }

  /**
   * Writes next(the key's live window) with compare-and-set against the revision read, again when
   * another node wrote between; nothing when next gives nothing.
   */
  private async change<W extends Window | undefined>(
    kv: KV,
    key: string,
    next: (live: Window | undefined) => W,
  ): Promise<W> {
    for (let tries = 0; tries < CAS_TRIES; tries++) {
      const entry = await kv.get(key);
      const window = next(this.live(entry));
      if (!window) return window;
      try {
        if (entry) await kv.update(key, JSON.stringify(window), entry.revision);
        else await kv.create(key, JSON.stringify(window));
        return window;
      } catch (error) {
        if (!lostRace(error)) throw error;
        // Writers that lost to one another draw a random wait, doubling its bound each time: a burst
        // of guesses at one key spreads out instead of losing again together (and being told busy).
        await sleep(Math.random() * Math.min(2 ** tries, MAX_CAS_PAUSE_MS));
      }
    }
    throw new LoginCountBusy(`the site's count of a login changed ${CAS_TRIES} times while it was written`);
  }

  private live(entry: KvEntry | null): Window | undefined {
    if (entry?.operation !== 'PUT') return undefined;
    const window = entry.json<Window>();
    return this.endOf(window) > 0 ? window : undefined;
  }

  private endOf(window: Window): number {
    return window.start + this.limits.windowMs - this.now();
  }
}
