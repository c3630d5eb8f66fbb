import type { Clock } from '../clock';

export interface LoginLimits {
  /** Length of a counting window. */
  windowMs: number;
  /** Failed attempts one client address may make per window. */
  perClient: number;
  /**
   * Failed attempts per username per window, from all clients together: above perClient, so that
   * one client alone cannot lock a user out.
   */
  perUser: number;
  /** Client addresses and usernames remembered at most, each; memory stays bounded under a flood. */
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
}

/** Attempts per key in fixed windows, for at most maxKeys keys at a time. */
class WindowCounter {
  // Insertion order is window start order: a new window re-inserts its key at the end.
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

  /** Milliseconds until the key may try again; 0 when it may now. */
  waitFor(key: string): number {
    const window = this.live(key);
    return window && window.count >= this.limit ? this.endOf(window) : 0;
  }

  /** Counts an attempt; returns the wait instead when there is no room to remember a new key. */
  add(key: string): number {
    const window = this.live(key);
    if (window) {
      window.count++;
      return 0;
    }
    this.sweep();
    if (this.windows.size >= this.maxKeys) {
      const oldest = this.windows.values().next().value;
      return oldest ? this.endOf(oldest) : 0;
    }
    this.windows.set(key, { start: this.clock.now(), count: 1 });
    return 0;
  }

  remove(key: string): void {
    const window = this.live(key);
    if (window && window.count > 0) window.count--;
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
}

export type LoginAttempt = { ok: true; forget(): void } | { ok: false; retryAfterMs: number };

/**
 * Limits password guessing per client address and per username. An attempt counts from its start,
 * so a burst of concurrent guesses is limited like a sequence; one that succeeds is forgotten.
 */
export class LoginLimiter {
  private readonly clients: WindowCounter;
  private readonly users: WindowCounter;

  constructor(clock: Clock, limits: Partial<LoginLimits> = {}) {
    const { windowMs, perClient, perUser, maxTracked } = { ...DEFAULT_LOGIN_LIMITS, ...limits };
    this.clients = new WindowCounter(clock, windowMs, perClient, maxTracked);
    this.users = new WindowCounter(clock, windowMs, perUser, maxTracked);
  }

  begin(client: string, username: string): LoginAttempt {
    const wait = Math.max(this.clients.waitFor(client), this.users.waitFor(username));
    if (wait > 0) return { ok: false, retryAfterMs: wait };
    const clientWait = this.clients.add(client);
    if (clientWait > 0) return { ok: false, retryAfterMs: clientWait };
    const userWait = this.users.add(username);
    if (userWait > 0) {
      this.clients.remove(client);
      return { ok: false, retryAfterMs: userWait };
    }
    return {
      ok: true,
      forget: () => {
        this.clients.remove(client);
        this.users.remove(username);
      },
    };
  }

  /** Client addresses and usernames remembered now. */
  trackedCount(): number {
    return this.clients.size + this.users.size;
  }
}
