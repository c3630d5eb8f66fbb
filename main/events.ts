import type { EventBus } from '../engine/events/bus';
import { PushChannels } from '../preload/channels';

/** The part of a BrowserWindow the event feed needs. */
export interface FeedWindow {
  isDestroyed(): boolean;
  webContents: { send(channel: string, ...args: unknown[]): void };
}

/**
 * The desktop console's live feed: every event the engine stores goes to the window over one push
 * channel, the same bodies the web console reads from the SSE endpoint. Returns the unsubscribe.
 */
export function forwardEngineEvents(bus: EventBus, window: () => FeedWindow | null): () => void {
  const forward = ({ body }: { body: unknown }) => {
    const target = window();
    if (target && !target.isDestroyed()) target.webContents.send(PushChannels.event, body);
  };
  bus.on('event', forward);
  return () => {
    bus.off('event', forward);
  };
}
