import type { ServerResponse } from 'node:http';
import type { DeliveryRecord } from './delivery';
import type { AppendedEvent, EventLog } from './event-log';

/** Events replayed to a console that reconnects with Last-Event-ID; beyond, it pages the events endpoint. */
export const REPLAY_LIMIT = 1000;
/** Feeds open at once; one more is refused (503 with Retry-After) rather than cost memory. */
export const MAX_FEEDS = 32;
/**
 * Unsent output a feed may hold: a console further behind is cut off (it reconnects and replays
 * from its Last-Event-ID). What a feed holds is this at most, plus the one event being written.
 */
export const MAX_FEED_BUFFER = 1024 * 1024;
/** A replay writes stored events while less than this is unsent, then waits for the client to read. */
const REPLAY_LOW_WATER = MAX_FEED_BUFFER / 2;
/** Keeps proxies and the server's idle timeout from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
const PING = Buffer.from(': ping\n\n');

export interface FeedFilter {
  taskId?: string;
  /** Replay stored events after this id first (EventSource's Last-Event-ID). */
  afterId?: number;
}

interface Feed {
  response: ServerResponse;
  taskId?: string;
  /** Log position of the last event written: replay goes on after it, and no event goes out twice. */
  lastId: number;
  /** Stored events are still being read from the log; live ones wait there meanwhile. */
  replaying: boolean;
  replayed: number;
  /**
   * The latest position of a live event this feed wanted while it replayed: a read of the log that
   * ends before it was answered before that event was readable, so the replay reads on.
   */
  heardLive: number;
}

const callbackFrame = (id: number, json: string) => `id: ${id}\nevent: callback\ndata: ${json}\n\n`;

/**
 * The console's live feed as Server-Sent Events: `event: callback` with the stored body (its `id:` is
 * its position in the event log, for Last-Event-ID) and `event: delivery` with each delivery-state
 * change. A live event is encoded once and the same bytes go to every feed, so slow feeds share what
 * they hold.
 */
export class ConsoleFeeds {
  private readonly open = new Set<Feed>();
  private readonly unsubscribe: Array<() => void>;

  constructor(private readonly log: EventLog) {
    this.unsubscribe = [
      log.subscribe((event) => this.onEvent(event)),
      log.subscribeDeliveries((record) => this.onDelivery(record)),
    ];
  }

  get full(): boolean {
    return this.open.size >= MAX_FEEDS;
  }

  /** Serves a feed on the response; returns the function that ends it. */
  serve(response: ServerResponse, filter: FeedFilter): () => void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const feed: Feed = {
      response,
      taskId: filter.taskId,
      lastId: filter.afterId ?? 0,
      replaying: filter.afterId !== undefined,
      replayed: 0,
      heardLive: 0,
    };
    const heartbeat = setInterval(() => this.send(feed, PING), HEARTBEAT_MS);
    heartbeat.unref();
    this.open.add(feed);
    response.once('close', () => {
      clearInterval(heartbeat);
      this.open.delete(feed);
    });
    this.send(feed, 'retry: 2000\n\n');
    if (feed.replaying) void this.replay(feed);
    return () => end(response);
  }

  /** Ends every stream, so that the server can close. */
  closeAll(): void {
    for (const stop of this.unsubscribe) stop();
    for (const feed of this.open) end(feed.response);
  }

  /**
   * Writes stored events after the feed's last one, paced by the client's reading: a replay holds
   * what it has not sent in the log, not in memory. It turns live once a read finds nothing more
   * and no live event it wants came past its last one meanwhile, so no event falls between the two.
   * A log that cannot be read ends the feed: the client reconnects and resumes from its last id.
   */
  private async replay(feed: Feed): Promise<void> {
    const { response } = feed;
    try {
      while (!response.destroyed && response.writableLength < REPLAY_LOW_WATER) {
        const [row] =
          feed.replayed < REPLAY_LIMIT ? await this.log.readAfter(feed.lastId, feed.taskId, 1) : [];
        if (!row) {
          if (feed.replayed < REPLAY_LIMIT && feed.heardLive > feed.lastId) continue;
          feed.replaying = false;
          return;
        }
        if (!this.send(feed, callbackFrame(row.id, row.json))) return;
        feed.lastId = row.id;
        feed.replayed += 1;
      }
    } catch {
      response.destroy();
      return;
    }
    if (!response.destroyed) response.once('drain', () => void this.replay(feed));
  }

  private onEvent(event: AppendedEvent): void {
    let frame: Buffer | undefined;
    for (const feed of this.open) {
      if (event.id <= feed.lastId || !wanted(feed, event.taskId)) continue;
      if (feed.replaying) {
        feed.heardLive = Math.max(feed.heardLive, event.id);
        continue;
      }
      frame ??= Buffer.from(callbackFrame(event.id, event.json));
      if (this.send(feed, frame)) feed.lastId = event.id;
    }
  }

  private onDelivery(record: DeliveryRecord): void {
    let frame: Buffer | undefined;
    for (const feed of this.open) {
      if (!wanted(feed, record.task_id)) continue;
      frame ??= Buffer.from(`event: delivery\ndata: ${JSON.stringify(record)}\n\n`);
      this.send(feed, frame);
    }
  }

  /** Writes to a feed unless it is over its buffer, which cuts it off; false when nothing was written. */
  private send(feed: Feed, chunk: Buffer | string): boolean {
    const { response } = feed;
    // Ended (revoked, or the engine stops) but not closed yet: a late write would be an error.
    if (response.writableEnded || response.destroyed) return false;
    if (response.writableLength > MAX_FEED_BUFFER) {
      response.destroy();
      return false;
    }
    response.write(chunk);
    return true;
  }
}

const wanted = (feed: Feed, taskId: string) => feed.taskId === undefined || feed.taskId === taskId;

/** Ends a stream: cleanly for a client that has read everything, at once for one that has not. */
function end(response: ServerResponse): void {
  if (response.writableLength > 0) response.destroy();
  else response.end();
}
