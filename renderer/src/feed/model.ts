/**
 * The console's live event feed as data: events newest first with their delivery state, bounded in
 * number and in snapshot memory, filtered by task, app and rule, and counted per app over time.
 * Pure functions; the feed store (./store) holds one FeedState.
 */
import type { CallbackBody, DeliveryRecord } from '../../../engine/contract';

export type { CallbackBody, DeliveryRecord };
export type DeliveryState = DeliveryRecord['state'];

export interface FeedItem {
  body: CallbackBody;
  /** Known delivery state; null until the engine says (SSE sends it on the first change). */
  delivery: DeliveryRecord | null;
  /** Snapshots were dropped from this copy to bound the console's memory (not the engine's). */
  imagesTrimmed: boolean;
  /**
   * Attempts made before the redeliveries this console saw: the engine counts `attempts` from the last
   * redelivery, so without them "Send again" would leave the row at the count it had. Absent: none.
   */
  earlierAttempts?: number;
}

export interface FeedState {
  /** Newest first (by storage order as received). */
  items: readonly FeedItem[];
  /** Delivery records that arrived before their event (a redelivery of an older one, a race). */
  pendingDeliveries: Readonly<Record<string, DeliveryRecord>>;
}

export interface FeedLimits {
  /** Most events kept. */
  maxItems: number;
  /** Only the newest this many events keep their snapshots (base64 JPEGs are large). */
  maxWithImages: number;
}

export const DEFAULT_LIMITS: FeedLimits = { maxItems: 5000, maxWithImages: 300 };

export const emptyFeed: FeedState = { items: [], pendingDeliveries: {} };

function withoutImages(body: CallbackBody): CallbackBody {
  if (body.event !== 'message') return body;
  return { ...body, data: { ...body.data, rules: body.data.rules.map((rule) => ({ ...rule, image: '' })) } };
}

/** Adds a stored event (again: an SSE replay or a page of history replaces the known copy). */
export function addEvent(
  state: FeedState,
  body: CallbackBody,
  limits: FeedLimits = DEFAULT_LIMITS,
): FeedState {
  const { [body.event_id]: early, ...pendingDeliveries } = state.pendingDeliveries;
  const previous = state.items.find((item) => item.body.event_id === body.event_id);
  const item: FeedItem = {
    body,
    delivery: early ?? previous?.delivery ?? null,
    imagesTrimmed: false,
    earlierAttempts: previous?.earlierAttempts ?? 0,
  };
  const rest = previous ? state.items.filter((entry) => entry !== previous) : state.items;
  // Keep storage order: an older event (history) goes after the newer ones of the same task.
  const index = rest.findIndex(
    (entry) =>
      entry.body.timestamp < body.timestamp ||
      (entry.body.task_id === body.task_id && entry.body.seq < body.seq),
  );
  const items = index === -1 ? [...rest, item] : [...rest.slice(0, index), item, ...rest.slice(index)];
  return { items: trim(items, limits), pendingDeliveries };
}

function trim(items: FeedItem[], limits: FeedLimits): FeedItem[] {
  const kept = items.slice(0, limits.maxItems);
  return kept.map((item, index) =>
    index >= limits.maxWithImages && !item.imagesTrimmed && item.body.event === 'message'
      ? { ...item, body: withoutImages(item.body), imagesTrimmed: true }
      : item,
  );
}

/**
 * Whether `record` is older than `known`. A redelivery restarts the deadline and the count of attempts,
 * and every later change adds an attempt, so (deadline_at, attempts) orders one event's records; a
 * redeliver answer that comes back after the SSE record of its delivery must not undo it.
 */
function isStale(record: DeliveryRecord, known: DeliveryRecord): boolean {
  if (record.deadline_at !== known.deadline_at) return record.deadline_at < known.deadline_at;
  return record.attempts < known.attempts;
}

/** A change of delivery state (SSE `delivery`, IPC, a redeliver answer, a page of E.7). */
export function applyDelivery(state: FeedState, record: DeliveryRecord): FeedState {
  let found = false;
  const items = state.items.map((item) => {
    if (item.body.event_id !== record.event_id) return item;
    found = true;
    const known = item.delivery;
    if (known && isStale(record, known)) return item;
    const redelivered = known !== null && record.deadline_at > known.deadline_at;
    const earlierAttempts = (item.earlierAttempts ?? 0) + (redelivered ? known.attempts : 0);
    return { ...item, delivery: record, earlierAttempts };
  });
  if (found) return { ...state, items };
  const early = state.pendingDeliveries[record.event_id];
  if (early && isStale(record, early)) return state;
  return { ...state, pendingDeliveries: { ...state.pendingDeliveries, [record.event_id]: record } };
}

/** HTTP attempts this console knows of for an event, over its redeliveries. */
export function attemptsOf(item: FeedItem): number {
  return (item.earlierAttempts ?? 0) + (item.delivery?.attempts ?? 0);
}

/**
 * The state to show: the engine's record when known; otherwise what a new event of this task starts
 * as (no report_url: no_receiver, else pending).
 */
export function deliveryStateOf(item: FeedItem, hasReceiver: boolean | undefined): DeliveryState | null {
  if (item.delivery) return item.delivery.state;
  if (hasReceiver === undefined) return null;
  return hasReceiver ? 'pending' : 'no_receiver';
}

export interface FeedFilter {
  taskId?: string;
  appId?: string;
  /** A rule id such as "person:0" or "crowd:counter". */
  ruleId?: string;
}

export function matchesFilter(body: CallbackBody, filter: FeedFilter): boolean {
  if (filter.taskId && body.task_id !== filter.taskId) return false;
  if (filter.appId && body.app_id !== filter.appId) return false;
  if (filter.ruleId) {
    if (body.event !== 'message') return false;
    if (!body.data.rules.some((rule) => rule.id === filter.ruleId)) return false;
  }
  return true;
}

export function filterFeed(items: readonly FeedItem[], filter: FeedFilter): FeedItem[] {
  return items.filter((item) => matchesFilter(item.body, filter));
}

/** The values the filters can take, from what is in the feed. */
export function filterChoices(items: readonly FeedItem[]): {
  tasks: string[];
  apps: string[];
  rules: string[];
} {
  const tasks = new Set<string>();
  const apps = new Set<string>();
  const rules = new Set<string>();
  for (const { body } of items) {
    tasks.add(body.task_id);
    if (body.app_id) apps.add(body.app_id);
    if (body.event === 'message') for (const rule of body.data.rules) rules.add(rule.id);
  }
  const sorted = (set: Set<string>) => [...set].sort();
  return { tasks: sorted(tasks), apps: sorted(apps), rules: sorted(rules) };
}

export interface CountSeries {
  /** Start of each bucket, ms since the epoch, oldest first. */
  starts: number[];
  /** Fired rules per app in each bucket. */
  perApp: Record<string, number[]>;
}

/**
 * Fired rules per app in `buckets` windows of `bucketMs` ending at `now` (by the event's timestamp):
 * the chart of the events screen.
 */
export function countsPerApp(
  items: readonly FeedItem[],
  options: { now: number; bucketMs: number; buckets: number },
): CountSeries {
  const { now, bucketMs, buckets } = options;
  const end = Math.floor(now / bucketMs) * bucketMs + bucketMs;
  const start = end - buckets * bucketMs;
  const starts = Array.from({ length: buckets }, (_, i) => start + i * bucketMs);
  const perApp: Record<string, number[]> = {};
  for (const { body } of items) {
    if (body.event !== 'message' || body.timestamp < start || body.timestamp >= end) continue;
    const series = perApp[body.app_id] ?? Array.from({ length: buckets }, () => 0);
    const index = Math.floor((body.timestamp - start) / bucketMs);
    series[index] = (series[index] ?? 0) + body.data.rules.length;
    perApp[body.app_id] = series;
  }
  return { starts, perApp };
}

/** The rows a virtualised list renders: those in view plus `overscan` on either side. */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  count: number,
  overscan = 4,
): { first: number; last: number } {
  if (count === 0 || rowHeight <= 0) return { first: 0, last: -1 };
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count - 1, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan - 1);
  return { first, last: Math.max(first - 1, last) };
}
