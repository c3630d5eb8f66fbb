import type { Clock, TimerHandle } from '../clock';

/** Why a held answer ends: its token was revoked (sign-out, password change) or expired. */
export type HoldEnd = 'revoked' | 'expired';

interface Hold {
  tokenHash: string;
  username: string;
  end: (why: HoldEnd) => void;
  timer: TimerHandle;
}

/**
 * The long-lived answers a bearer token keeps open (the event feed, video sockets, a streamed
 * download): a request is authenticated once, at its start, so whatever it still sends afterwards
 * must end when its token does. Each hold ends once, on revocation or at the token's expiry on the
 * engine's clock, unless the answer let go of it first.
 */
export class TokenHolds {
  private readonly holds = new Set<Hold>();

  constructor(private readonly clock: Clock) {}

  /** Answers held open now. */
  get size(): number {
    return this.holds.size;
  }

  /** Holds an answer until the token ends; the returned function lets go (the answer ended first). */
  add(tokenHash: string, username: string, expiresAt: number, end: (why: HoldEnd) => void): () => void {
    const hold: Hold = {
      tokenHash,
      username,
      end,
      timer: this.clock.setTimeout(() => this.finish(hold, 'expired'), expiresAt - this.clock.now()),
    };
    this.holds.add(hold);
    return () => this.release(hold);
  }

  /** Ends what the token holds open. */
  revokeToken(tokenHash: string): void {
    for (const hold of this.holds) if (hold.tokenHash === tokenHash) this.finish(hold, 'revoked');
  }

  /** Ends what any token of the user holds open (its password changed: all its tokens went). */
  revokeUser(username: string): void {
    for (const hold of this.holds) if (hold.username === username) this.finish(hold, 'revoked');
  }

  private finish(hold: Hold, why: HoldEnd): void {
    if (this.release(hold)) hold.end(why);
  }

  private release(hold: Hold): boolean {
    if (!this.holds.delete(hold)) return false;
    this.clock.clearTimeout(hold.timer);
    return true;
  }
}
