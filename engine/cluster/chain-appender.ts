import type { CallbackBody } from '../events/schema';
import { Superseded, type TaskChain } from './event-chain';

/** How soon an append that failed for want of NATS (not a refusal) is tried again. */
const RETRY_MS = 500;

/**
 * Appends the events of the tasks this node owns to their chains, in seq order, each right after the
 * outbox stored it: the local outbox stays the write-ahead log (durable before anything else), the
 * chain is the site's copy. An append the servers cannot take now waits and goes again; one refused
 * because another node took the task over ends this node's part: onSuperseded gets what it still held.
 */
export class ChainAppender {
  private readonly chains = new Map<
    string,
    { chain: TaskChain; queue: CallbackBody[]; busy: boolean; retired: boolean }
  >();
  private retryTimer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    /** `chained`: the seq of the last event this node appended to the task's chain. */
    private readonly onSuperseded: (
      taskId: string,
      held: CallbackBody[],
      chained: number,
      error: Superseded,
    ) => void,
    private readonly onError: (error: unknown, taskId: string) => void,
    /** Events up to the task's chain seq are in the chain now. */
    private readonly onAppended: (taskId: string) => void,
  ) {}

  /** Starts appending a task's events to its claimed chain, beginning with `held` (stored, not yet appended). */
  own(chain: TaskChain, held: readonly CallbackBody[] = []): void {
    this.chains.set(chain.taskId, { chain, queue: [...held], busy: false, retired: false });
    this.onAppended(chain.taskId);
    void this.drain(chain.taskId);
  }

  /** Stops appending a task's events (released or closed here); returns what was not appended. */
  disown(taskId: string): CallbackBody[] {
    const entry = this.chains.get(taskId);
    this.chains.delete(taskId);
    return entry?.queue ?? [];
  }

  /** The task closed here: its chain is let go once what it holds is appended (its last events). */
  retire(taskId: string): void {
    const entry = this.chains.get(taskId);
    if (!entry) return;
    entry.retired = true;
    if (!entry.busy && entry.queue.length === 0) this.chains.delete(taskId);
  }

  owns(taskId: string): boolean {
    return this.chains.has(taskId);
  }

  /** The chain of a task this node owns. */
  chainOf(taskId: string): TaskChain | undefined {
    return this.chains.get(taskId)?.chain;
  }

  /** An event the outbox stored: appended when its task's chain is this node's. */
  stored(body: CallbackBody): void {
    const entry = this.chains.get(body.task_id);
    if (!entry) return;
    entry.queue.push(body);
    void this.drain(body.task_id);
  }

  /** Events stored here and not yet in the chains. */
  get backlog(): number {
    let n = 0;
    for (const entry of this.chains.values()) n += entry.queue.length;
    return n;
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  private async drain(taskId: string): Promise<void> {
    const entry = this.chains.get(taskId);
    if (!entry || entry.busy || this.closed) return;
    entry.busy = true;
    try {
      while (entry.queue.length > 0 && this.chains.get(taskId) === entry) {
        const body = entry.queue[0] as CallbackBody;
        // Already in the chain (appended before a restart, or imported from it): skipped.
        if (body.seq <= entry.chain.seq) {
          entry.queue.shift();
          continue;
        }
        await entry.chain.append({ seq: body.seq, event_id: body.event_id, late: body.late === true, body });
        entry.queue.shift();
        this.onAppended(taskId);
      }
    } catch (error) {
      if (error instanceof Superseded) {
        this.chains.delete(taskId);
        this.onSuperseded(taskId, entry.queue, entry.chain.seq, error);
        return;
      }
      this.onError(error, taskId);
      this.retryLater();
    } finally {
      entry.busy = false;
    }
    if (entry.retired && entry.queue.length === 0 && this.chains.get(taskId) === entry)
      this.chains.delete(taskId);
  }

  private retryLater(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      for (const taskId of this.chains.keys()) void this.drain(taskId);
    }, RETRY_MS);
  }
}
