import { describe, expect, it } from 'vitest';
import { EventBus, type StoredEvent } from '../engine/events/bus';
import type { DeliveryRecord } from '../engine/events/delivery';
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

const record = (seq: number, state: DeliveryRecord['state']) => ({ seq, state }) as unknown as DeliveryRecord;
const stored = (seq: number) =>
  ({ id: seq, body: { seq }, json: '', delivery: record(seq, 'pending') }) as unknown as StoredEvent;

describe('desktop event feed', () => {
  it('pushes every stored event with its first state, and every state change, until disposed', () => {
    const bus = new EventBus();
    const { window, sent } = fakeWindow();
    const stop = forwardEngineEvents(bus, () => window);
    bus.emit('event', stored(1));
    bus.emit('delivery', record(1, 'delivered'));
    stop();
    bus.emit('event', stored(2));
    bus.emit('delivery', record(2, 'delivered'));
    expect(sent).toEqual([
      [PushChannels.event, { seq: 1 }],
      [PushChannels.delivery, record(1, 'pending')],
      [PushChannels.delivery, record(1, 'delivered')],
    ]);
    expect(bus.listenerCount('event')).toBe(0);
    expect(bus.listenerCount('delivery')).toBe(0);
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
    expect(sent).toEqual([
      [PushChannels.event, { seq: 3 }],
      [PushChannels.delivery, record(3, 'pending')],
    ]);
  });
});
