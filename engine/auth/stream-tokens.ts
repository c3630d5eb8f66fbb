import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock';

/** A stream token's validity is counted in whole periods of this length (5 min). */
export const STREAM_TOKEN_PERIOD_MS = 5 * 60_000;

/** The HMAC key's length: 256 bits. */
export const STREAM_KEY_BYTES = 32;

const TOKEN = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * Short-lived tokens for the segment URIs of one HLS stream, so that a playlist never repeats the
 * caller's 24 h API token: an HMAC over the stream's scope and an expiry, under a key that lives and
 * dies with the process (a single workstation) or one key of the whole site (cluster mode: a URL
 * signed by one node verifies on every other). The expiry is the end of the next whole period, so every playlist refresh
 * within a period lists the same URIs (players cache by URI) and a token lives one to two periods.
 */
export class StreamTokens {
  constructor(
    private readonly clock: Clock,
    private readonly periodMs = STREAM_TOKEN_PERIOD_MS,
    private readonly key: Buffer = randomBytes(STREAM_KEY_BYTES),
  ) {}

  issue(scope: string): string {
    const expires = this.expiresAt();
    return `${expires.toString(36)}.${this.mac(scope, expires)}`;
  }

  /** When a token issued now expires (epoch ms). */
  expiresAt(): number {
    return (Math.floor(this.clock.now() / this.periodMs) + 2) * this.periodMs;
  }

  /** Whether the token was issued for exactly this scope and has not expired. */
  verify(scope: string, token: string): boolean {
    const match = TOKEN.exec(token);
    if (!match?.[1] || !match[2]) return false;
    const expires = Number.parseInt(match[1], 36);
    if (expires <= this.clock.now()) return false;
    return timingSafeEqual(Buffer.from(match[2]), Buffer.from(this.mac(scope, expires)));
  }

  private mac(scope: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${scope}\n${expires}`).digest('base64url');
  }
}
