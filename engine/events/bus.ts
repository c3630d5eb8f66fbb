import { EventEmitter } from 'node:events';
import type { DeliveryRecord } from './delivery';
import type { CallbackBody } from './schema';

/** A newly stored event: its body, that body as sent (JSON), and where its delivery stands. */
export interface StoredEvent {
  /** Global storage order; the SSE feed's event id (Last-Event-ID resumes after it). */
  id: number;
  body: CallbackBody;
  json: string;
  delivery: DeliveryRecord;
}

export interface BusEvents {
  event: [StoredEvent];
  delivery: [DeliveryRecord];
}

/**
 * The in-process feed of results: every stored event and every change of its delivery state. The
 * delivery worker, the MQTT publisher, the SSE endpoint and the desktop's IPC all listen here.
 * A listener that throws is reported and skipped, so a broken console view never stops delivery,
 * and never fails the analysis that stored the event.
 */
export class EventBus extends EventEmitter<BusEvents> {
  constructor(private readonly onListenerError: (error: unknown) => void = () => {}) {
    super();
    // Every open console stream adds listeners; their number is not a leak.
    this.setMaxListeners(0);
  }

  override emit<K extends keyof BusEvents>(name: K, ...args: BusEvents[K]): boolean {
    // Raw listeners: calling a once() wrapper removes it, as EventEmitter's own emit does.
    const listeners = this.rawListeners(name) as ((...payload: BusEvents[K]) => void)[];
    for (const listener of listeners) {
      try {
        listener(...args);
      } catch (error) {
        this.onListenerError(error);
      }
    }
    return listeners.length > 0;
  }
}
