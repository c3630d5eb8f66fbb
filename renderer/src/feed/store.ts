/**
 * The live feed of the signed-in console: one subscription (SSE or IPC) for every screen. Events
 * arrive as they are stored; the events screen pages older ones in from the events endpoint.
 */
import { useEffect } from 'react';
import { create } from 'zustand';
import type { EventItem } from '../api';
import type { FeedMessage, Transport } from '../transport';
import { addEvent, applyDelivery, emptyFeed, type FeedState } from './model';

interface FeedStore extends FeedState {
  connected: boolean;
  receive(message: FeedMessage): void;
  /** Adds a page of stored events (E.7 with bodies) with their delivery records. */
  addHistory(items: readonly EventItem[]): void;
  setConnected(connected: boolean): void;
  clear(): void;
}

export const useFeed = create<FeedStore>()((set) => ({
  ...emptyFeed,
  connected: false,
  receive(message) {
    set((state) =>
      message.type === 'callback' ? addEvent(state, message.body) : applyDelivery(state, message.record),
    );
  },
  addHistory(items) {
    set((state) => {
      let next: FeedState = state;
      for (const { body, ...record } of items) {
        if (!body) continue;
        next = applyDelivery(addEvent(next, body), record);
      }
      return next;
    });
  },
  setConnected(connected) {
    set({ connected });
  },
  clear() {
    set({ ...emptyFeed, connected: false });
  },
}));

/** Keeps the feed subscribed while `active` (signed in); forgets it when the session ends. */
export function useFeedSubscription(transport: Transport, active: boolean): void {
  useEffect(() => {
    if (!active) return;
    const { receive, setConnected, clear } = useFeed.getState();
    const unsubscribe = transport.subscribe(receive, setConnected);
    return () => {
      unsubscribe();
      clear();
    };
  }, [transport, active]);
}
