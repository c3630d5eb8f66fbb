import { describe, expect, it } from 'vitest';
import type { EventPage, EventQuery } from '../engine/callbacks/outbox';
import { type ChainPage, mergeHistory } from '../engine/cluster/site-history';
import type { DeliveryState, EventItem } from '../engine/events/delivery';
import type { CallbackBody } from '../engine/events/schema';

// How a node lists a task's events in cluster mode: the chain's seqs (earlier owners' events with
// them) merged with what this node stored, paged by seq.
const TASK = 'task-1';
const body = (seq: number, eventId = `ev${seq}`) =>
  ({
    event: 'task_started',
    task_id: TASK,
    app_id: '',
    business_id: '',
    timestamp: 1_000 + seq,
    event_id: eventId,
    seq,
    data: {},
  }) as unknown as CallbackBody;
const chainEvent = (seq: number, eventId = `ev${seq}`) => ({
  kind: 'event' as const,
  epoch: 1,
  seq,
  event_id: eventId,
  late: false,
  body: body(seq, eventId),
});
const stored = (seq: number, state: DeliveryState, eventId = `ev${seq}`): EventItem => ({
  event_id: eventId,
  task_id: TASK,
  seq,
  event: 'task_started',
  app_id: '',
  timestamp: 1_000 + seq,
  created_at: 2_000 + seq,
  state,
  attempts: 1,
  next_attempt_at: null,
  deadline_at: 9_000,
  delivered_at: state === 'delivered' ? 3_000 : null,
  http_status: 200,
  answer_code: 0,
  answer_msg: 'ok',
  last_error: null,
  image_dropped: false,
});
const query = (over: Partial<EventQuery> = {}): EventQuery => ({
  after_seq: 0,
  limit: 100,
  with_body: false,
  ...over,
});
const page = (items: EventItem[], lastSeq = items.at(-1)?.seq ?? 0): EventPage => ({
  items,
  last_seq: lastSeq,
  next_after_seq: null,
});
const delivery = { settledSeq: 2, noReceiver: false, retryForMs: 10_000 };
const summary = (merged: EventPage | undefined) => ({
  items: merged?.items.map((item) => [item.seq, item.event_id, item.state]),
  last_seq: merged?.last_seq,
  next_after_seq: merged?.next_after_seq,
});

describe('a task’s history in cluster mode', () => {
  it('lists the earlier owners’ events from the chain and this node’s own with their records', () => {
    const chain: ChainPage = { lastSeq: 4, events: [1, 2, 3, 4].map((seq) => chainEvent(seq)) };
    // This node took the task at seq 3 (undelivered then) and stored seq 5, not chained yet.
    const local = page([stored(3, 'delivered'), stored(4, 'pending'), stored(5, 'pending')]);
    const merged = mergeHistory(local, chain, query(), delivery);
    expect(summary(merged)).toEqual({
      items: [
        [1, 'ev1', 'delivered'],
        [2, 'ev2', 'delivered'],
        [3, 'ev3', 'delivered'],
        [4, 'ev4', 'pending'],
        [5, 'ev5', 'pending'],
      ],
      last_seq: 5,
      next_after_seq: null,
    });
    // The node's own record is kept as it is: its attempts and answer.
    expect(merged?.items[2]).toEqual(stored(3, 'delivered'));
    expect(merged?.items[0]).toMatchObject({ attempts: 0, http_status: null, created_at: 1_001 });
  });

  it('takes the chain’s event where this node stored another at that seq', () => {
    const chain: ChainPage = { lastSeq: 2, events: [chainEvent(1), chainEvent(2, 'chained')] };
    const local = page([stored(1, 'delivered'), stored(2, 'pending', 'never-chained')]);
    const merged = mergeHistory(local, chain, query({ with_body: true }), delivery);
    expect(merged?.items.map((item) => [item.seq, item.event_id, item.body?.event_id])).toEqual([
      [1, 'ev1', undefined],
      [2, 'chained', 'chained'],
    ]);
  });

  it('pages by seq: a page ends where the shorter full side ends, and the state filter applies after', () => {
    const chain: ChainPage = { lastSeq: 9, events: [3, 4].map((seq) => chainEvent(seq)) };
    const local = page([stored(4, 'pending'), stored(5, 'pending')], 9);
    const first = mergeHistory(local, chain, query({ after_seq: 2, limit: 2 }), delivery);
    expect(summary(first)).toEqual({
      items: [
        [3, 'ev3', 'pending'],
        [4, 'ev4', 'pending'],
      ],
      last_seq: 9,
      next_after_seq: 4,
    });
    const settled = mergeHistory(
      page([]),
      { lastSeq: 2, events: [chainEvent(1)] },
      query({ state: 'delivered', limit: 1 }),
      { ...delivery, settledSeq: 1 },
    );
    expect(summary(settled)).toEqual({ items: [[1, 'ev1', 'delivered']], last_seq: 2, next_after_seq: 1 });
    const none = mergeHistory(undefined, { lastSeq: 0, events: [] }, query(), delivery);
    expect(none).toBeUndefined();
    const noReceiver = mergeHistory(undefined, { lastSeq: 1, events: [chainEvent(1)] }, query(), {
      ...delivery,
      noReceiver: true,
    });
    expect(noReceiver?.items.map((item) => item.state)).toEqual(['no_receiver']);
  });
});
