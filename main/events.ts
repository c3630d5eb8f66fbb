import { PushChannels } from '../preload/channels';
import type { FeedMessage } from './engine-supervisor';

/** The part of a BrowserWindow the event feed needs. */
export interface FeedWindow {
  isDestroyed(): boolean;
  webContents: { send(channel: string, ...args: unknown[]): void };
}

/** Where the engine's feed comes from: the supervisor, which receives it from the engine process. */
export interface FeedSource {
  onFeed(listener: (message: FeedMessage) => void): () => void;
}

/**
 * The desktop console's live feed: every event the engine stores, and every change of its delivery
 * state, goes to the window over the push channels: what the web console reads from the SSE
 * endpoint. A new event's first state comes along as a delivery message, which SSE leaves out (the
 * engine process sends it right after the event). Returns the unsubscribe.
 */
export function forwardEngineEvents(source: FeedSource, window: () => FeedWindow | null): () => void {
  return source.onFeed((message) => {
    const target = window();
    if (!target || target.isDestroyed()) return;
    if (message.type === 'event') target.webContents.send(PushChannels.event, message.body);
    else target.webContents.send(PushChannels.delivery, message.record);
  });
}
