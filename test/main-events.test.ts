import { describe, expect, it } from 'vitest';
import { EventBus, type StoredEvent } from '../engine/events/bus';
import { type FeedWindow, forwardEngineEvents } from '../main/events';
import { PushChannels } from '../preload/channels';

/** main's side of the desktop live feed, with a real event bus and a window stand-in (no Electron here). */
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

const stored = (seq: number) =>
  ({ id: seq, body: { seq }, json: '', delivery: {} }) as unknown as StoredEvent;

describe('desktop event feed', () => {
  it('pushes every stored event body to the window on the push channel, and stops when disposed', () => {
    const bus = new EventBus();
    const { window, sent } = fakeWindow();
    const stop = forwardEngineEvents(bus, () => window);
    bus.emit('event', stored(1));
    bus.emit('event', stored(2));
    stop();
    bus.emit('event', stored(3));
    expect(sent).toEqual([
      [PushChannels.event, { seq: 1 }],
      [PushChannels.event, { seq: 2 }],
    ]);
    expect(bus.listenerCount('event')).toBe(0);
  });

  it('skips a closed or destroyed window without failing the bus', () => {
    const bus = new EventBus();
    const { window, sent } = fakeWindow();
    let current: FeedWindow | null = null;
    forwardEngineEvents(bus, () => current);
    bus.emit('event', stored(1));
    current = window;
    window.destroyed = true;
    bus.emit('event', stored(2));
    window.destroyed = false;
    bus.emit('event', stored(3));
    expect(sent).toEqual([[PushChannels.event, { seq: 3 }]]);
  });
});
