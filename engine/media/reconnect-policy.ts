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

/**
 * An operator's camera (a persistent task) is tried every 3 s at most, for as long as it is lost, so
 * that it plays again within a few seconds of its stream's return. What that costs while the camera
 * is dead: a failed try is an ffmpeg start, about 0.08 s of CPU, so about 3% of one core per dead
 * camera (docs/security.md).
 */
export const PERSISTENT_RECONNECT_POLICY: ReconnectPolicy = { firstMs: 1_000, maxMs: 3_000 };

/** The policy of a task's source: persistent or as the contract has it. */
export const reconnectPolicyOf = (persistent: boolean): ReconnectPolicy =>
  persistent ? PERSISTENT_RECONNECT_POLICY : RECONNECT_POLICY;

/** The wait before try `retry` since the source was last healthy (0: the first try). */
export function reconnectDelayMs(policy: ReconnectPolicy, retry: number): number {
  return Math.min(policy.firstMs * 2 ** retry, policy.maxMs);
}

/** The policy's waits in turn, for one source. */
export class ReconnectBackoff {
  private retries = 0;

  /** A policy read at each wait, so that a task changed meanwhile waits by its new one. */
  constructor(private readonly policy: ReconnectPolicy | (() => ReconnectPolicy) = RECONNECT_POLICY) {}

  /** The wait before the next try; each call counts one more failure. */
  next(): number {
    const policy = typeof this.policy === 'function' ? this.policy() : this.policy;
    return reconnectDelayMs(policy, this.retries++);
  }

  /** The source is healthy: the next loss starts from the first wait again. */
  reset(): void {
    this.retries = 0;
  }
}
