/**
 * Keeps a node's copy of something the site holds in a KV bucket (its packages, its apps' rules)
 * converging on the bucket: a round now, one on each change a KV watch reports, and one every
 * `pollMs` besides, because a watch can stall for tens of seconds after a NATS server dies (issue 32's
 * measurements). Rounds never overlap: a call while one runs makes one more after it, however many
 * calls came.
 */
export class BucketFollower {
  private converging?: Promise<void>;
  private again = false;
  private pollTimer?: NodeJS.Timeout;
  private watcher?: { stop(): void };
  private closed = false;

  constructor(
    private readonly bucket: { watch(): Promise<AsyncIterable<unknown> & { stop(): void }> },
    private readonly pollMs: number,
    /** One round; what it throws goes to `failed`, and the next round tries again. */
    private readonly round: () => Promise<void>,
    private readonly failed: (error: Error) => void,
  ) {}

  start(): void {
    void this.converge();
    this.pollTimer = setInterval(() => void this.converge(), this.pollMs);
    void this.watch();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.pollTimer);
    this.watcher?.stop();
  }

  /** A round now, or one more after the one running; resolves when the rounds are done. */
  converge(): Promise<void> {
    if (this.converging) {
      this.again = true;
      return this.converging;
    }
    this.converging = (async () => {
      do {
        this.again = false;
        if (this.closed) return;
        await this.round().catch((error) => this.failed(error as Error));
      } while (this.again && !this.closed);
    })().finally(() => {
      this.converging = undefined;
    });
    return this.converging;
  }

  private async watch(): Promise<void> {
    while (!this.closed) {
      try {
        const watcher = await this.bucket.watch();
        this.watcher = watcher;
        for await (const _change of watcher) void this.converge();
      } catch {
        // NATS is away: the poll goes on, and the watch is opened again below.
      }
      // Unref'd: a closing engine does not wait for it.
      await new Promise((done) => setTimeout(done, this.pollMs).unref());
    }
  }
}
