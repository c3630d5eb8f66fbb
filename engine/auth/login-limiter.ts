import type { Clock } from '../clock';

export interface LoginLimits {
  /** Length of a counting window. */
  windowMs: number;
  /** Failed attempts one client (an IPv4 address, an IPv6 /64) may make per window. */
  perClient: number;
  /**
   * Failed attempts per username per window, from all clients together. Beyond it, only a client
   * without a failure in the window may still try that user: many addresses can slow the guessing
   * of a password down, never lock out a client that has not failed.
   */
  perUser: number;
  /**
   * Clients and usernames remembered at most, each; memory stays bounded under a flood. When full,
   * the oldest window is forgotten (never an existing user's, for a made-up username).
   */
  maxTracked: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = {
  windowMs: 60_000,
  perClient: 10,
  perUser: 30,
  maxTracked: 10_000,
};

interface Window {
  start: number;
  count: number;
  /** An existing user's window: a flood of made-up usernames never pushes it out. */
  kept: boolean;
}

/**
 * Attempts per key in fixed windows, for at most maxKeys keys at a time. A key is remembered only
 * while it has an attempt counted: one that was forgotten (it succeeded, or was never checked)
 * leaves nothing behind.
 */
class WindowCounter {
  // Insertion order is window start order: a new window is inserted at the end.
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number,
    private readonly limit: number,
    private readonly maxKeys: number,
  ) {}

  get size(): number {
    return this.windows.size;
  }

  /** Attempts counted for the key in its window. */
  count(key: string): number {
    return this.live(key)?.count ?? 0;
  }

  /** Milliseconds until the key may try again; 0 when it may now. */
  waitFor(key: string): number {
    const window = this.live(key);
    return window && window.count >= this.limit ? this.endOf(window) : 0;
  }

  /** Milliseconds until the key's window ends; 0 when it has none. */
  windowLeft(key: string): number {
    const window = this.live(key);
    return window ? this.endOf(window) : 0;
  }

  add(key: string, kept: boolean): void {
    const window = this.live(key);
    if (window) {
      window.count++;
      return;
    }
    this.sweep();
    if (this.windows.size >= this.maxKeys) this.evict();
    this.windows.set(key, { start: this.clock.now(), count: 1, kept });
  }

  remove(key: string): void {
    const window = this.live(key);
    if (!window) return;
    window.count--;
    if (window.count <= 0) this.windows.delete(key);
  }

  private live(key: string): Window | undefined {
    const window = this.windows.get(key);
    if (window && this.endOf(window) <= 0) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }

  private endOf(window: Window): number {
    return window.start + this.windowMs - this.clock.now();
  }

  private sweep(): void {
    for (const [key, window] of this.windows) {
      if (this.endOf(window) > 0) break;
      this.windows.delete(key);
    }
  }

  /** Forgets the oldest window that is not kept, or the oldest of all when every one is. */
  private evict(): void {
    let oldest: string | undefined;
    for (const [key, window] of this.windows) {
      oldest ??= key;
      if (!window.kept) {
        oldest = key;
        break;
      }
    }
    if (oldest !== undefined) this.windows.delete(oldest);
  }
}

export type LoginAttempt = { ok: true; forget(): void } | { ok: false; retryAfterMs: number };

/**
 * Failed logins counted beyond this node (a cluster's site, engine/cluster/site-logins.ts), by the
 * same rules: asked after the node's own LoginLimiter, which still decides when it cannot answer.
 * Throws LoginCountBusy when it is counting too many logins at once.
 */
export interface SharedLoginCount {
  begin(client: string, username: string, existingUser: boolean): Promise<LoginAttempt>;
}

export class LoginCountBusy extends Error {}

/**
 * Limits password guessing per client and per username. An attempt counts from its start, so a
 * burst of concurrent guesses is limited like a sequence; one that succeeds, or is never checked,
 * is forgotten. docs/security.md gives the reasoning and what it bounds.
 */
export class LoginLimiter {
  private readonly clients: WindowCounter;
  private readonly users: WindowCounter;

  constructor(clock: Clock, limits: Partial<LoginLimits> = {}) {
    const { windowMs, perClient, perUser, maxTracked } = { ...DEFAULT_LOGIN_LIMITS, ...limits };
    this.clients = new WindowCounter(clock, windowMs, perClient, maxTracked);
    this.users = new WindowCounter(clock, windowMs, perUser, maxTracked);
  }

  /** `existingUser`: the username is an account's, whose window a flood of made-up names never displaces. */
  begin(client: string, username: string, existingUser: boolean): LoginAttempt {
    const clientWait = this.clients.waitFor(client);
    if (clientWait > 0) return { ok: false, retryAfterMs: clientWait };
    // Over the user's limit, a client that has failed in this window waits until the user's window
    // or its own ends; a client without a failure may still try.
    const userWait = this.users.waitFor(username);
    if (userWait > 0 && this.clients.count(client) > 0)
      return { ok: false, retryAfterMs: Math.min(userWait, this.clients.windowLeft(client)) };
    this.clients.add(client, false);
    this.users.add(username, existingUser);
    return {
      ok: true,
      forget: () => {
        this.clients.remove(client);
        this.users.remove(username);
      },
    };
  }

  /** Clients and usernames remembered now. */
  trackedCount(): number {
    return this.clients.size + this.users.size;
  }
}
