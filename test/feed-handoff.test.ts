import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../engine/events/delivery';
import type { AppendedEvent, EventLog, LoggedEvent } from '../engine/events/event-log';
import { ConsoleFeeds } from '../engine/events/feed';
import { FeedClient } from './helpers/feed-client';

/**
 * A log read over a network (the site's, in cluster mode): each read is answered a turn later, and a
 * test may append while a read is on its way, as another node does. Held in memory here: the feed's
 * handoff from replay to live is what is under test, over a real HTTP stream.
 */
class NetworkLog implements EventLog {
  readonly events: AppendedEvent[] = [];
  /** Called as a read is made, with what it will answer; may append before the answer arrives. */
  onRead?: (found: LoggedEvent[]) => void;
  private readonly listeners = new Set<(event: AppendedEvent) => void>();

  append(taskId: string): void {
    const id = (this.events.at(-1)?.id ?? 0) + 3;
    const event = { id, taskId, json: JSON.stringify({ task_id: taskId, event_id: `e${id}` }) };
    this.events.push(event);
    for (const listener of this.listeners) listener(event);
  }

  async readAfter(afterId: number, taskId: string | undefined, limit: number): Promise<LoggedEvent[]> {
    const found = this.events
      .filter((event) => event.id > afterId && (taskId === undefined || event.taskId === taskId))
      .slice(0, limit)
      .map(({ id, json }) => ({ id, json }));
    this.onRead?.(found);
    await new Promise((done) => setImmediate(done));
    return found;
  }

  subscribe(listener: (event: AppendedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  subscribeDeliveries(_listener: (record: DeliveryRecord) => void): () => void {
    return () => {};
  }
}

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

async function serve(feeds: ConsoleFeeds): Promise<string> {
  server = createServer((request, response) => {
    const afterId = new URL(request.url ?? '/', 'http://x').searchParams.get('after');
    feeds.serve(response, { afterId: afterId === null ? undefined : Number(afterId) });
  });
  await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('the feed turning from replay to live', () => {
  it('misses no event appended while its last read was on its way, and sends none twice', async () => {
    const log = new NetworkLog();
    log.append('a');
    log.append('b');
    const feeds = new ConsoleFeeds(log);
    // The read that finds the end answers "nothing more" after an event was appended and heard live.
    log.onRead = (found) => {
      if (found.length > 0) return;
      log.onRead = undefined;
      log.append('a');
    };
    const client = await FeedClient.open(`${await serve(feeds)}?after=0`);
    try {
      await client.until('three events', () => client.callbacks().length >= 3);
      log.append('b');
      await client.until('the live one', () => client.callbacks().length >= 4);
      expect(client.callbacks().map(({ id }) => id)).toEqual(log.events.map(({ id }) => id));
    } finally {
      client.close();
      feeds.closeAll();
    }
  });
});
