import type { ServerResponse } from 'node:http';
import type { Outbox } from '../callbacks/outbox';
import type { EventBus, StoredEvent } from './bus';
import type { DeliveryRecord } from './delivery';

/** Events replayed to a console that reconnects with Last-Event-ID; beyond, it pages the events endpoint. */
export const REPLAY_LIMIT = 1000;
/** A console that reads slower than this much buffered output is cut off; it reconnects and replays. */
const MAX_BUFFERED = 16 * 1024 * 1024;
/** Keeps proxies and the server's idle timeout from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;

export interface FeedFilter {
  taskId?: string;
  /** Replay stored events after this id first (EventSource's Last-Event-ID). */
  afterId?: number;
}

/**
 * The console's live feed as Server-Sent Events: `event: callback` with the stored body (its `id:` is
 * the storage order, for Last-Event-ID) and `event: delivery` with each delivery-state change.
 */
export class ConsoleFeeds {
  private readonly open = new Set<ServerResponse>();

  constructor(
    private readonly outbox: Outbox,
    private readonly bus: EventBus,
  ) {}

  /** Serves a feed on the response; returns the function that ends it. */
  serve(response: ServerResponse, filter: FeedFilter): () => void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const wanted = (taskId: string) => filter.taskId === undefined || filter.taskId === taskId;
    const write = (text: string) => {
      // Ended (too slow, or the engine stops) but not closed yet: a late write would be an error.
      if (response.writableEnded) return;
      response.write(text);
      if (response.writableLength > MAX_BUFFERED) response.end();
    };
    const onEvent = (event: StoredEvent) => {
      if (wanted(event.body.task_id)) write(`id: ${event.id}\nevent: callback\ndata: ${event.json}\n\n`);
    };
    const onDelivery = (record: DeliveryRecord) => {
      if (wanted(record.task_id)) write(`event: delivery\ndata: ${JSON.stringify(record)}\n\n`);
    };
    const heartbeat = setInterval(() => write(': ping\n\n'), HEARTBEAT_MS);
    heartbeat.unref();

    write('retry: 2000\n\n');
    // Replay and subscription happen in one synchronous step, so no event falls between them.
    if (filter.afterId !== undefined) {
      for (const row of this.outbox.since(filter.afterId, filter.taskId, REPLAY_LIMIT))
        write(`id: ${row.id}\nevent: callback\ndata: ${row.json}\n\n`);
    }
    this.bus.on('event', onEvent);
    this.bus.on('delivery', onDelivery);
    this.open.add(response);
    response.once('close', () => {
      clearInterval(heartbeat);
      this.bus.off('event', onEvent);
      this.bus.off('delivery', onDelivery);
      this.open.delete(response);
    });
    return () => response.end();
  }

  /** Ends every stream, so that the server can close. */
  closeAll(): void {
    for (const response of this.open) response.end();
  }
}
