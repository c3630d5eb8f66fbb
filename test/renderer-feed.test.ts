import { describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../engine/events/delivery';
import type { CallbackBody } from '../engine/events/schema';
import {
  addEvent,
  applyDelivery,
  attemptsOf,
  countsPerApp,
  deliveryStateOf,
  emptyFeed,
  type FeedItem,
  type FeedState,
  filterChoices,
  filterFeed,
  visibleRange,
} from '../renderer/src/feed/model';

/** The live feed's data: order, delivery states, the memory bound, filters, the chart's counts. */
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function message(task: string, seq: number, app: string, at: number, rules = [`${app}:0`]): CallbackBody {
  return {
    event: 'message',
    task_id: task,
    app_id: app,
    business_id: '',
    timestamp: at,
    event_id: `${task}-${seq}`,
    seq,
    data: {
      frame: { width: 768, height: 576, id: seq },
      rules: rules.map((id) => ({
        id,
        class_id: '0',
        image: 'AAAA',
        objects: [{ track_id: '1', x: 10, y: 10, w: 4, h: 8, score: 0.9, class_id: '0', name: 'person' }],
      })),
    },
  };
}

const closed = (task: string, seq: number, at: number): CallbackBody => ({
  event: 'task_closed',
  task_id: task,
  app_id: '',
  business_id: '',
  timestamp: at,
  event_id: `${task}-${seq}`,
  seq,
  data: { close_code: 1, status: 'closed', dump: 'closed by the caller' },
});

function record(eventId: string, state: DeliveryRecord['state']): DeliveryRecord {
  return { event_id: eventId, state, attempts: 1 } as DeliveryRecord;
}

const feed = (...bodies: CallbackBody[]): FeedState =>
  bodies.reduce((state, body) => addEvent(state, body), emptyFeed);

describe('feed', () => {
  it('keeps the newest first; history pages slot in by time; a second copy replaces the first', () => {
    let state = feed(message('a', 3, 'person', T0 + 3000), message('a', 4, 'person', T0 + 4000));
    state = addEvent(state, message('a', 1, 'person', T0 + 1000));
    state = addEvent(state, message('b', 1, 'vehicle', T0 + 3500));
    expect(state.items.map((item) => item.body.event_id)).toEqual(['a-4', 'b-1', 'a-3', 'a-1']);
    state = addEvent(state, message('a', 3, 'person', T0 + 3000));
    expect(state.items.map((item) => item.body.event_id)).toEqual(['a-4', 'b-1', 'a-3', 'a-1']);
  });

  it('delivery states land on their event, also when they come first', () => {
    let state = applyDelivery(emptyFeed, record('a-1', 'pending'));
    expect(state.pendingDeliveries['a-1']).toBeDefined();
    state = addEvent(state, message('a', 1, 'person', T0));
    expect(state.items[0]?.delivery?.state).toBe('pending');
    expect(state.pendingDeliveries).toEqual({});
    state = applyDelivery(state, record('a-1', 'delivered'));
    expect(state.items[0]?.delivery?.state).toBe('delivered');
    // The same event again keeps its known state.
    state = addEvent(state, message('a', 1, 'person', T0));
    expect(state.items[0]?.delivery?.state).toBe('delivered');
  });

  it('"Send again" adds to the attempts shown, and an answer older than the record it follows is ignored', () => {
    const at = (state: DeliveryRecord['state'], attempts: number, deadline_at: number) =>
      ({ event_id: 'a-1', state, attempts, deadline_at }) as DeliveryRecord;
    let state = addEvent(emptyFeed, message('a', 1, 'person', T0));
    state = applyDelivery(state, at('delivered', 1, 1000));
    // The worker delivers the redelivered event; its SSE record overtakes the redeliver answer.
    state = applyDelivery(state, at('delivered', 1, 2000));
    state = applyDelivery(state, at('pending', 0, 2000));
    state = applyDelivery(state, at('delivered', 1, 1000));
    expect(state.items[0]?.delivery).toEqual(at('delivered', 1, 2000));
    expect(attemptsOf(state.items[0] as FeedItem)).toBe(2);
    // In order: the answer, then the delivery.
    state = applyDelivery(state, at('pending', 0, 3000));
    expect([state.items[0]?.delivery?.state, attemptsOf(state.items[0] as FeedItem)]).toEqual(['pending', 2]);
    state = applyDelivery(state, at('delivered', 1, 3000));
    expect([state.items[0]?.delivery?.state, attemptsOf(state.items[0] as FeedItem)]).toEqual([
      'delivered',
      3,
    ]);
  });

  it('without a record, a new event starts pending, or no_receiver for a task without report_url', () => {
    const [item] = feed(message('a', 1, 'person', T0)).items;
    if (!item) throw new Error('no item');
    expect(deliveryStateOf(item, true)).toBe('pending');
    expect(deliveryStateOf(item, false)).toBe('no_receiver');
    expect(deliveryStateOf(item, undefined)).toBeNull();
    expect(deliveryStateOf({ ...item, delivery: record('a-1', 'dead') }, true)).toBe('dead');
  });

  it('is bounded: only the newest keep their snapshots, and the oldest go', () => {
    let state = emptyFeed;
    for (let seq = 1; seq <= 8; seq++) {
      state = addEvent(state, message('a', seq, 'person', T0 + seq * 1000), {
        maxItems: 6,
        maxWithImages: 2,
      });
    }
    expect(state.items.map((item) => item.body.seq)).toEqual([8, 7, 6, 5, 4, 3]);
    const images = state.items.map((item) =>
      item.body.event === 'message' ? item.body.data.rules[0]?.image : undefined,
    );
    expect(images).toEqual(['AAAA', 'AAAA', '', '', '', '']);
    expect(state.items.map((item) => item.imagesTrimmed)).toEqual([false, false, true, true, true, true]);
  });

  it('filters by task, app and rule, and offers the values present', () => {
    const state = feed(
      message('a', 1, 'person', T0, ['person:0']),
      message('a', 2, 'crowd', T0 + 1, ['crowd:0', 'crowd:counter']),
      message('b', 1, 'person', T0 + 2, ['person:0']),
      closed('a', 3, T0 + 3),
    );
    expect(filterFeed(state.items, { taskId: 'a' })).toHaveLength(3);
    expect(filterFeed(state.items, { appId: 'person' }).map((item) => item.body.event_id)).toEqual([
      'b-1',
      'a-1',
    ]);
    expect(filterFeed(state.items, { ruleId: 'crowd:counter' }).map((item) => item.body.event_id)).toEqual([
      'a-2',
    ]);
    expect(filterFeed(state.items, { taskId: 'b', ruleId: 'crowd:counter' })).toEqual([]);
    expect(filterChoices(state.items)).toEqual({
      tasks: ['a', 'b'],
      apps: ['crowd', 'person'],
      rules: ['crowd:0', 'crowd:counter', 'person:0'],
    });
  });

  it('counts fired rules per app in time buckets ending now', () => {
    const now = T0 + 59_000;
    const state = feed(
      message('a', 1, 'person', T0 - 10_000),
      message('a', 2, 'person', T0 + 1_000),
      message('a', 3, 'crowd', T0 + 12_000, ['crowd:0', 'crowd:counter']),
      message('a', 4, 'person', T0 + 55_000),
      closed('a', 5, T0 + 56_000),
    );
    const series = countsPerApp(state.items, { now, bucketMs: 10_000, buckets: 6 });
    expect(series.starts).toEqual([0, 1, 2, 3, 4, 5].map((i) => T0 + i * 10_000));
    expect(series.perApp).toEqual({ person: [1, 0, 0, 0, 0, 1], crowd: [0, 2, 0, 0, 0, 0] });
  });
});

describe('virtualised list', () => {
  it('renders the rows in view plus the overscan, and nothing for an empty list', () => {
    expect(visibleRange(0, 500, 100, 1000, 2)).toEqual({ first: 0, last: 6 });
    expect(visibleRange(10_000, 500, 100, 1000, 2)).toEqual({ first: 98, last: 106 });
    expect(visibleRange(99_900, 500, 100, 1000, 2)).toEqual({ first: 997, last: 999 });
    expect(visibleRange(0, 500, 100, 0)).toEqual({ first: 0, last: -1 });
  });
});
