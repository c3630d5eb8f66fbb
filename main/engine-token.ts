import type { IssuedToken } from '../engine/contract/engine-process';

/**
 * Caches the engine token and renews it a minute before it expires. Concurrent callers share one
 * request; invalidate() (a 401, a restarted engine) makes the next get() ask again.
 */
export class TokenSource {
  private token: Promise<string> | null = null;
  private expiresAt = 0;

  constructor(
    private readonly engine: { issueToken(): Promise<IssuedToken> },
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<string> {
    if (this.token !== null && this.now() < this.expiresAt - 60_000) return this.token;
    this.expiresAt = Number.POSITIVE_INFINITY;
    const token = this.engine.issueToken().then(
      (issued) => {
        if (this.token === token) this.expiresAt = this.now() + issued.expires_in * 1000;
        return issued.access_token;
      },
      (error: unknown) => {
        if (this.token === token) this.token = null;
        throw error;
      },
    );
    this.token = token;
    return token;
  }

  invalidate(): void {
    this.token = null;
  }
}
