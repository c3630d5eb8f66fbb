import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

// scrypt N=2^15 costs ~50 ms a login: cheap for an operator, expensive for a guessing attack.
const N = 1 << 15;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

export interface HasherLimits {
  /**
   * scrypt runs at once. They run on libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says
   * otherwise), which fs, dns and sharp share, and each keeps a core busy: a login flood must leave
   * threads to the rest and a core to the event loop, even on a 2-core machine.
   */
  hashConcurrency: number;
  /** Hashes waiting for a thread; beyond them a hash is refused at once (HasherBusyError). */
  hashQueue: number;
}

export const DEFAULT_HASHER_LIMITS: HasherLimits = { hashConcurrency: 1, hashQueue: 16 };

export class HasherBusyError extends Error {
  constructor() {
    super('too many passwords are being checked at once');
  }
}

/** scrypt off the event loop, on a bounded share of libuv's thread pool with a bounded wait queue. */
export class PasswordHasher {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly limits: HasherLimits;

  constructor(limits: Partial<HasherLimits> = {}) {
    this.limits = { ...DEFAULT_HASHER_LIMITS, ...limits };
  }

  /** scrypt computations in progress. */
  get running(): number {
    return this.active;
  }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await this.scrypt(password, salt, KEY_LENGTH, { N, maxmem: MAX_MEMORY });
    return `scrypt$${N}$${salt.toString('base64url')}$${key.toString('base64url')}`;
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const [scheme, cost, salt, key] = stored.split('$');
    if (scheme !== 'scrypt' || !cost || !salt || !key) return false;
    const expected = Buffer.from(key, 'base64url');
    const actual = await this.scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
      N: Number(cost),
      maxmem: MAX_MEMORY,
    });
    return timingSafeEqual(expected, actual);
  }

  protected async scrypt(
    password: string,
    salt: Buffer,
    length: number,
    options: ScryptOptions,
  ): Promise<Buffer> {
    await this.acquire();
    try {
      return await new Promise<Buffer>((resolve, reject) =>
        scrypt(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))),
      );
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.active < this.limits.hashConcurrency) {
      this.active++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.hashQueue) return Promise.reject(new HasherBusyError());
    // The releasing hash hands its slot over: `active` stays as it is.
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}

/**
 * A stored hash no password matches (its key is random): an unknown user is checked against it, so
 * that it costs one scrypt like a known user and the answer time does not tell which users exist.
 */
export function decoyHash(): string {
  return `scrypt$${N}$${randomBytes(16).toString('base64url')}$${randomBytes(KEY_LENGTH).toString('base64url')}`;
}

/** A password for a first start without VC_ADMIN_PASSWORD: 24 characters from 144 random bits. */
export function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}
