import type { EventPage, EventQuery } from '../callbacks/outbox';
import type { DeliveryState, EventItem } from '../events/delivery';
import type { ClusterConnection } from './connection';
import { type ChainEntry, chainTail, entryOf, readChain } from './event-chain';
import { chainable, EVENTS_STREAM, eventSubject } from './site-store';

type ChainEvent = Extract<ChainEntry, { kind: 'event' }>;

/** A page of a task's chain: its events with a seq above the query's, in seq order, and its last seq. */
export interface ChainPage {
  lastSeq: number;
  events: ChainEvent[];
}

/**
 * The events of a task's chain after a seq, at most `limit`. Seqs only grow along a chain (an owner
 * entry repeats the last one), so where the page starts in the stream is found by bisection: a few
 * reads for any depth, then one read per entry of the page, each from the stream's leader.
 */
export async function readChainPage(
  conn: ClusterConnection,
  taskId: string,
  afterSeq: number,
  limit: number,
): Promise<ChainPage> {
  if (!chainable(taskId)) return { lastSeq: 0, events: [] };
  const tail = await chainTail(conn, taskId);
  // Every entry up to `from` has a seq of afterSeq or less; the first after `hi` has a larger one.
  let from = 0;
  let hi = tail.streamSeq;
  while (afterSeq > 0 && from < hi) {
    const mid = Math.ceil((from + hi) / 2);
    // The leader's API takes next_by_subj; the client's type names only seq and last_by_subj.
    const query = { seq: mid, next_by_subj: eventSubject(taskId) };
    const message = await conn.jsm.streams.getMessage(EVENTS_STREAM, query);
    const entry = message && entryOf(message.json());
    if (message && entry && entry.seq <= afterSeq) from = message.seq;
    else hi = mid - 1;
  }
  const events: ChainEvent[] = [];
  while (events.length < limit) {
    const entries = await readChain(conn, taskId, from, limit - events.length);
    if (entries.length === 0) break;
    for (const { streamSeq, entry } of entries) {
      from = streamSeq;
      if (entry.kind === 'event' && entry.seq > afterSeq) events.push(entry);
    }
  }
  return { lastSeq: tail.entry?.seq ?? 0, events };
}

/** What the site knows of how an event in a chain was delivered, for one this node did not store. */
export interface ChainDelivery {
  /** The task's events up to this seq were settled (the site's delivery mark). */
  settledSeq: number;
  /** The task has no receiver: its events are stored, never sent. */
  noReceiver: boolean;
  /** How long the outbox retries an event (its deadline after it was made). */
  retryForMs: number;
}

/**
 * A task's events as the site holds them: the seqs of its chain (the earlier owners' events with
 * them) and of this node's outbox (its newest, not yet chained, too), each seq once. An event this
 * node stored carries its own delivery record; one only the chain holds is described from the chain:
 * settled ones `delivered` (the earlier owner's attempts stay on its node), later ones `pending`. Both
 * pages start after the query's seq and hold at most its limit: the merged page ends where the
 * shorter full one does. The state filter applies to the merged items.
 */
export function mergeHistory(
  local: EventPage | undefined,
  chain: ChainPage,
  query: EventQuery,
  delivery: ChainDelivery,
): EventPage | undefined {
  if (!local && chain.events.length === 0) return undefined;
  const bySeq = new Map<number, EventItem>();
  for (const item of local?.items ?? []) bySeq.set(item.seq, item);
  for (const event of chain.events) {
    const stored = bySeq.get(event.seq);
    // The chain is the site's word: a stored event of that seq that is not the chain's is left out.
    if (stored?.event_id !== event.event_id) bySeq.set(event.seq, fromChain(event, query, delivery));
  }
  const full = (n: number) => n === query.limit;
  const ends = [
    full(local?.items.length ?? 0) ? local?.items.at(-1)?.seq : undefined,
    full(chain.events.length) ? chain.events.at(-1)?.seq : undefined,
  ].filter((seq): seq is number => seq !== undefined);
  const end = ends.length > 0 ? Math.min(...ends) : Number.POSITIVE_INFINITY;
  let items = [...bySeq.values()].filter((item) => item.seq <= end).sort((a, b) => a.seq - b.seq);
  let next: number | null = Number.isFinite(end) ? end : null;
  if (items.length > query.limit) {
    items = items.slice(0, query.limit);
    next = items.at(-1)?.seq ?? null;
  }
  return {
    items: query.state ? items.filter((item) => item.state === query.state) : items,
    last_seq: Math.max(local?.last_seq ?? 0, chain.lastSeq),
    next_after_seq: next,
  };
}

function fromChain(event: ChainEvent, query: EventQuery, delivery: ChainDelivery): EventItem {
  const { body } = event;
  const settled = event.seq <= delivery.settledSeq;
  const state: DeliveryState = delivery.noReceiver ? 'no_receiver' : settled ? 'delivered' : 'pending';
  return {
    event_id: event.event_id,
    task_id: body.task_id,
    seq: event.seq,
    event: body.event,
    app_id: body.app_id,
    timestamp: body.timestamp,
    created_at: body.timestamp,
    state,
    attempts: 0,
    next_attempt_at: state === 'pending' ? body.timestamp : null,
    deadline_at: body.timestamp + delivery.retryForMs,
    delivered_at: null,
    http_status: null,
    answer_code: null,
    answer_msg: null,
    last_error: null,
    image_dropped: false,
    ...(query.with_body ? { body } : {}),
  };
}
