import { describe, expect, it } from 'vitest';
import type { FeedMessage } from '../main/engine-supervisor';
import { type FeedSource, type FeedWindow, forwardEngineEvents } from '../main/events';
import { PushChannels } from '../preload/channels';

/**
 * main's side of the desktop live feed: what the engine process sends (an event, then its first
 * delivery state; later changes) goes to the window. A stand-in feed and window (no Electron here).
 */
function fakeWindow() {
  const sent: Array<[string, unknown]> = [];
  const window: FeedWindow & { destroyed: boolean } = {
    destroyed: false,
    isDestroyed() {
      return this.destroyed;
    },
    webContents: { send: (channel, body) => sent.push([channel, body]) },
  };
  return { window, sent };
}

function fakeFeed() {
  const listeners = new Set<(message: FeedMessage) => void>();
  const source: FeedSource = {
    onFeed(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const emit = (message: FeedMessage) => {
    for (const listener of listeners) listener(message);
  };
  return { source, emit, listeners };
}

const record = (seq: number, state: string) => ({ seq, state });
const event = (seq: number): FeedMessage[] => [
  { type: 'event', body: { seq } },
  { type: 'delivery', record: record(seq, 'pending') },
];

describe('desktop event feed', () => {
  it('pushes every stored event with its first state, and every state change, until disposed', () => {
    const feed = fakeFeed();
    const { window, sent } = fakeWindow();
    const stop = forwardEngineEvents(feed.source, () => window);
    for (const message of event(1)) feed.emit(message);
    feed.emit({ type: 'delivery', record: record(1, 'delivered') });
    stop();
    for (const message of event(2)) feed.emit(message);
    expect(sent).toEqual([
      [PushChannels.event, { seq: 1 }],
      [PushChannels.delivery, record(1, 'pending')],
      [PushChannels.delivery, record(1, 'delivered')],
    ]);
    expect(feed.listeners.size).toBe(0);
  });

  it('skips a closed or destroyed window without failing the feed', () => {
    const feed = fakeFeed();
    const { window, sent } = fakeWindow();
    let current: FeedWindow | null = null;
    forwardEngineEvents(feed.source, () => current);
    for (const message of event(1)) feed.emit(message);
    current = window;
    window.destroyed = true;
    for (const message of event(2)) feed.emit(message);
    window.destroyed = false;
    for (const message of event(3)) feed.emit(message);
    expect(sent).toEqual([
      [PushChannels.event, { seq: 3 }],
      [PushChannels.delivery, record(3, 'pending')],
    ]);
  });
});
