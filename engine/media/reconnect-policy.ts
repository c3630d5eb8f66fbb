/**
 * How long to wait before reopening a lost source: the first wait, doubled after each failed try up
 * to a cap, and back to the first once the source is healthy again. The one policy for the stream
 * watchdog's reconnects and the task registry's reopening of a source that could not be opened.
 */
export interface ReconnectPolicy {
  readonly firstMs: number;
  readonly maxMs: number;
}

export const RECONNECT_POLICY: ReconnectPolicy = { firstMs: 1_000, maxMs: 30_000 };

/** The wait before try `retry` since the source was last healthy (0: the first try). */
export function reconnectDelayMs(policy: ReconnectPolicy, retry: number): number {
  return Math.min(policy.firstMs * 2 ** retry, policy.maxMs);
}

/** The policy's waits in turn, for one source. */
export class ReconnectBackoff {
  private retries = 0;

  constructor(private readonly policy: ReconnectPolicy = RECONNECT_POLICY) {}

  /** The wait before the next try; each call counts one more failure. */
  next(): number {
    return reconnectDelayMs(this.policy, this.retries++);
  }

  /** The source is healthy: the next loss starts from the first wait again. */
  reset(): void {
    this.retries = 0;
  }
}
