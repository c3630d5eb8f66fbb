/**
 * Link tokens for the web console's pictures and downloads (<img src>, download links): a page
 * cannot send a header there, and the 24 h API token must not sit in a URL that the browser keeps
 * in its history and a proxy in its log. The engine mints short-lived tokens, each for one resource's
 * scope (POST /api/auth/link); the signer asks for the paths the page links to, a batch at a time,
 * keeps each token until a minute before it expires, and tells its subscribers when new ones came.
 */

export interface MintedLinks {
  links: { path: string; url: string }[];
  expires_in: number;
}

/** How long before its expiry a token is renewed. */
const RENEW_BEFORE_MS = 60_000;
/** How long a path whose minting failed waits before it is asked again. */
const RETRY_MS = 5_000;
/** Paths in one request (the engine takes up to 200). */
const BATCH = 200;

interface Held {
  token: string;
  expiresAt: number;
}

export class LinkSigner {
  private readonly held = new Map<string, Held>();
  private readonly pending = new Set<string>();
  private readonly retryAt = new Map<string, number>();
  private readonly listeners = new Set<() => void>();
  private flushing = false;
  private version = 0;

  constructor(
    private readonly mint: (paths: string[]) => Promise<MintedLinks>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The URL with its link token, or null until one is there (the subscribers hear when it is). */
  sign(url: URL): string | null {
    const path = url.pathname;
    const held = this.held.get(path);
    const now = this.now();
    if (!held || now >= held.expiresAt - RENEW_BEFORE_MS) this.ask(path, now);
    if (!held || now >= held.expiresAt) return null;
    const signed = new URL(url);
    signed.searchParams.set('token', held.token);
    return signed.href;
  }

  /** For useSyncExternalStore: a number that changes whenever tokens came. */
  readonly snapshot = () => this.version;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private ask(path: string, now: number): void {
    if (this.pending.has(path) || (this.retryAt.get(path) ?? 0) > now) return;
    this.pending.add(path);
    if (this.flushing) return;
    this.flushing = true;
    // The paths of one render go out together.
    queueMicrotask(() => void this.flush());
  }

  private async flush(): Promise<void> {
    while (this.pending.size > 0) {
      const paths = [...this.pending].slice(0, BATCH);
      const asked = this.now();
      try {
        const minted = await this.mint(paths);
        const expiresAt = asked + minted.expires_in * 1000;
        for (const link of minted.links) {
          const token = new URL(link.url, 'http://engine/').searchParams.get('token');
          if (token) this.held.set(link.path, { token, expiresAt });
        }
      } catch {
        for (const path of paths) this.retryAt.set(path, asked + RETRY_MS);
      }
      for (const path of paths) this.pending.delete(path);
      this.version += 1;
      for (const listener of this.listeners) listener();
    }
    this.flushing = false;
  }
}
