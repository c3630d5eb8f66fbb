import type { EventBus, StoredEvent } from '../engine/events/bus';
import type { DeliveryRecord } from '../engine/events/delivery';
import { PushChannels } from '../preload/channels';

/** The part of a BrowserWindow the event feed needs. */
export interface FeedWindow {
  isDestroyed(): boolean;
  webContents: { send(channel: string, ...args: unknown[]): void };
}

/**
 * The desktop console's live feed: every event the engine stores, and every change of its delivery
 * state, goes to the window over the push channels: what the web console reads from the SSE
 * endpoint. A new event's first state comes along as a delivery message, which SSE leaves out.
 * Returns the unsubscribe.
 */
export function forwardEngineEvents(bus: EventBus, window: () => FeedWindow | null): () => void {
  const send = (channel: string, payload: unknown) => {
    const target = window();
    if (target && !target.isDestroyed()) target.webContents.send(channel, payload);
  };
  const onEvent = ({ body, delivery }: StoredEvent) => {
    send(PushChannels.event, body);
    send(PushChannels.delivery, delivery);
  };
  const onDelivery = (record: DeliveryRecord) => send(PushChannels.delivery, record);
  bus.on('event', onEvent);
  bus.on('delivery', onDelivery);
  return () => {
    bus.off('event', onEvent);
    bus.off('delivery', onDelivery);
  };
}
