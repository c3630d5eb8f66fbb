import type { Outbox } from '../callbacks/outbox';
import type { EventBus, StoredEvent } from './bus';
import type { DeliveryRecord } from './delivery';

/** One event as a log holds it: its position (the feed's event id) and its body as sent (JSON). */
export interface LoggedEvent {
  id: number;
  json: string;
}

/** An event appended to the log just now, with its task (live feeds filter by it). */
export interface AppendedEvent extends LoggedEvent {
  taskId: string;
}

/**
 * Where the console's feed reads events: a log of callback bodies in one order, each at a position
 * that only grows. A single workstation's log is its outbox (positions are row ids); a cluster's is
 * the site's event chains (positions are stream sequences, the same on every node). Events are
 * appended by the outbox, and in a cluster by the chain appender; the feed only reads.
 */
export interface EventLog {
  /** Stored events after a position, oldest first, at most `limit`; of one task when given. */
  readAfter(afterId: number, taskId: string | undefined, limit: number): Promise<LoggedEvent[]>;
  /**
   * Calls `listener` with each event appended from now on, in position order; returns the function
   * that stops it. An event may come here and from readAfter both: the feed keeps positions apart.
   */
  subscribe(listener: (event: AppendedEvent) => void): () => void;
  /** Calls `listener` with each change of an event's delivery state from now on (not replayed). */
  subscribeDeliveries(listener: (record: DeliveryRecord) => void): () => void;
}

/** The single workstation's log: the outbox's stored events, in storage order, heard of through the bus. */
export class OutboxEventLog implements EventLog {
  constructor(
    private readonly outbox: Outbox,
    private readonly bus: EventBus,
  ) {}

  async readAfter(afterId: number, taskId: string | undefined, limit: number): Promise<LoggedEvent[]> {
    return this.outbox.since(afterId, taskId, limit);
  }

  subscribe(listener: (event: AppendedEvent) => void): () => void {
    const onEvent = (event: StoredEvent) =>
      listener({ id: event.id, taskId: event.body.task_id, json: event.json });
    this.bus.on('event', onEvent);
    return () => this.bus.off('event', onEvent);
  }

  subscribeDeliveries(listener: (record: DeliveryRecord) => void): () => void {
    this.bus.on('delivery', listener);
    return () => this.bus.off('delivery', listener);
  }
}
