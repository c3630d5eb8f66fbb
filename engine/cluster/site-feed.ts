import { type ConsumerMessages, DeliverPolicy } from '@nats-io/jetstream';
import type { Subscription } from '@nats-io/transport-node';
import type { EventBus } from '../events/bus';
import type { DeliveryRecord } from '../events/delivery';
import type { AppendedEvent, EventLog, LoggedEvent } from '../events/event-log';
import type { ClusterConnection } from './connection';
import { entryOf, readSubject } from './event-chain';
import { chainable, EVENTS_STREAM, eventSubject } from './site-store';

/** Every task's chain: the subjects of VC_EVENTS. */
const ALL_CHAINS = eventSubject('>');
/** How soon the live reader starts again after its consumer ended without being closed. */
const RESTART_MS = 1_000;
/**
 * Each node's delivery-state changes, for the other nodes' feeds: vc.delivery.<node>. Core NATS, not
 * a stream: a change is news for the consoles open now, never replayed (as on a single workstation).
 */
/**
 * How long one pull of the live reader lasts; the server's heartbeats come at half of it. A pull the
 * lost server held is noticed after two missed heartbeats, and the consumer made again from the next
 * entry (with the default 30 s, a feed stalled up to a minute when its node's server was killed).
 */
const PULL_EXPIRES_MS = 4_000;
/**
 * How often the live reader is held against the stream's end: one that heard nothing while the stream
 * grew is made again from the next entry. The polling fallback the issue asks for: consumers and
 * watches stalled after a server died (KV watches 11-22 s measured; this reader once over a minute).
 */
const STALL_CHECK_MS = 5_000;
const deliverySubject = (node: string) => `vc.delivery.${node}`;

/**
 * The site's event log: the event entries of every task's chain in VC_EVENTS, at their stream
 * sequence, which is the same on every node and only grows, so a console's Last-Event-ID resumes on
 * any node. Owner entries are left out; a late event is an event entry like any other (once). One
 * ordered consumer per node hears what is appended and hands it to every feed, so feeds cost the
 * servers nothing each; a feed's replay reads from the stream's leader at its client's pace.
 */
export class SiteEventLog implements EventLog {
  private readonly listeners = new Set<(event: AppendedEvent) => void>();
  private readonly deliveryListeners = new Set<(record: DeliveryRecord) => void>();
  private messages?: ConsumerMessages;
  private deliveries?: Subscription;
  private readonly onDelivery = (record: DeliveryRecord) => {
    this.tellDelivery(record);
    this.conn.nc.publish(deliverySubject(this.node), JSON.stringify(record));
  };
  /** The stream sequence of the last entry the live reader saw: a restart goes on after it. */
  private seen = 0;
  private restartTimer?: NodeJS.Timeout;
  private stallTimer?: NodeJS.Timeout;
  /** The live reader heard an entry since the last stall check. */
  private heard = false;
  /** The entry the live reader was at when the last check found the stream past it. */
  private behind?: number;
  private closed = false;

  constructor(
    private readonly conn: ClusterConnection,
    private readonly node: string,
    private readonly bus: EventBus,
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * Starts hearing appends from the stream's end as it is now: whatever was appended before is
   * readable (readAfter), whatever comes after is heard. Called before any feed opens.
   */
  async start(): Promise<void> {
    const info = await this.conn.jsm.streams.info(EVENTS_STREAM);
    this.seen = info.state.last_seq;
    // A stream just made may not take consumers yet: the reader starts later from the same entry,
    // and what was appended meanwhile reaches the feeds then, in order.
    await this.listen().catch((error) => {
      this.onError(error);
      this.restartLater();
    });
    this.stallTimer = setInterval(() => void this.checkStall(), STALL_CHECK_MS);
    // This node's changes go to its feeds at once and to the other nodes' through NATS.
    this.bus.on('delivery', this.onDelivery);
    this.deliveries = this.conn.nc.subscribe(deliverySubject('*'), {
      callback: (error, message) => {
        if (error || message.subject === deliverySubject(this.node)) return;
        let record: DeliveryRecord;
        try {
          record = message.json<DeliveryRecord>();
        } catch (cause) {
          this.onError(cause);
          return;
        }
        this.tellDelivery(record);
      },
    });
  }

  async readAfter(afterId: number, taskId: string | undefined, limit: number): Promise<LoggedEvent[]> {
    if (taskId !== undefined && !chainable(taskId)) return [];
    const subject = taskId === undefined ? ALL_CHAINS : eventSubject(taskId);
    const found: LoggedEvent[] = [];
    let after = afterId;
    while (found.length < limit) {
      const [message] = await readSubject(this.conn, EVENTS_STREAM, subject, after, 1);
      if (!message) break;
      after = message.streamSeq;
      const entry = entryOf(message.json);
      if (entry?.kind === 'event') found.push({ id: message.streamSeq, json: JSON.stringify(entry.body) });
    }
    return found;
  }

  subscribe(listener: (event: AppendedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  subscribeDeliveries(listener: (record: DeliveryRecord) => void): () => void {
    this.deliveryListeners.add(listener);
    return () => this.deliveryListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    clearInterval(this.stallTimer);
    this.bus.off('delivery', this.onDelivery);
    this.deliveries?.unsubscribe();
    await this.messages?.close();
  }

  /**
   * An ordered consumer from the entry after the last one seen: it recreates itself on a gap or a
   * lost server, so what it hands on is every entry, in stream order, once.
   */
  private async listen(): Promise<void> {
    const consumer = await this.conn.js.consumers.get(EVENTS_STREAM, {
      filter_subjects: ALL_CHAINS,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.seen + 1,
    });
    const messages = await consumer.consume({ expires: PULL_EXPIRES_MS });
    this.messages = messages;
    if (this.closed) await messages.close();
    else void this.hear(messages);
  }

  private async hear(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const message of messages) {
        this.seen = message.seq;
        this.heard = true;
        const entry = entryOf(message.json());
        if (entry?.kind !== 'event') continue;
        const event = { id: message.seq, taskId: entry.body.task_id, json: JSON.stringify(entry.body) };
        for (const listener of this.listeners) listener(event);
      }
    } catch (error) {
      this.onError(error);
    }
    this.restartLater();
  }

  /**
   * Ends a live reader that heard nothing over two checks while the stream had grown past it (one
   * check could catch an entry on its way): hear() makes it again from the next entry.
   */
  private async checkStall(): Promise<void> {
    const seen = this.seen;
    const messages = this.messages;
    const suspect = this.behind;
    this.behind = undefined;
    if (this.heard || !messages) {
      this.heard = false;
      return;
    }
    const info = await this.conn.jsm.streams.info(EVENTS_STREAM).catch(() => undefined);
    if (!info || info.state.last_seq <= seen || this.heard || this.messages !== messages) return;
    if (suspect !== seen) {
      this.behind = seen;
      return;
    }
    this.onError(
      new Error(`the live reader stalled after entry ${seen} of ${info.state.last_seq}; made again`),
    );
    await messages.close();
  }

  private tellDelivery(record: DeliveryRecord): void {
    for (const listener of this.deliveryListeners) listener(record);
  }

  private restartLater(): void {
    if (this.closed) return;
    this.restartTimer = setTimeout(() => {
      this.listen().catch((error) => {
        this.onError(error);
        this.restartLater();
      });
    }, RESTART_MS);
  }
}
