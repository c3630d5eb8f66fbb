import { randomUUID } from 'node:crypto';
import type { ClipRef } from '../clips/clip-schema';
import type { Clock } from '../clock';
import { DomainError } from '../domain-error';
import { alarmFacts } from '../events/alarm-facts';
import type { EventBus, StoredEvent } from '../events/bus';
import type { DeliveryRecord, DeliveryState, EventItem } from '../events/delivery';
import { AlarmGrouping } from '../events/review-grouping';
import { type CallbackBody, NewEvent } from '../events/schema';
import { compileCheck } from '../schema/ajv';
import type { DeliveryErrorKind } from './delivery-error';
import type { EventRow, OutboxRepository, PendingEvent } from './outbox-repository';
import { RefusedEvents } from './refused-events';

/**
 * Where a task's events go. report_url "" sends them to the site-wide default receiver
 * (Outbox.defaultReportUrl), or, with none either, stores them without any HTTP delivery.
 */
export interface ReportTarget {
  task_id: string;
  report_url: string;
  /** Signs each callback with HMAC-SHA256 when set (X-Vision-Signature). */
  report_secret?: string;
}

export interface OutboxOptions {
  /** Base64 snapshot text kept over all stored events; beyond it the oldest snapshots are dropped. */
  imageLimitBytes: number;
  /** How long an event is retried before it is marked dead. */
  retryForMs: number;
}

export const OUTBOX_DEFAULTS: OutboxOptions = {
  imageLimitBytes: 512 * 1024 * 1024,
  retryForMs: 24 * 3600_000,
};

const DAY_MS = 24 * 3600_000;

/** The result of one HTTP attempt. */
export interface AttemptOutcome {
  ok: boolean;
  http_status: number | null;
  answer_code: number | null;
  answer_msg: string | null;
  error: string | null;
}

export interface EventPage {
  items: EventItem[];
  last_seq: number;
  next_after_seq: number | null;
}

export interface EventQuery {
  after_seq: number;
  limit: number;
  state?: DeliveryState;
  with_body: boolean;
}

export interface Backlog {
  pending: number;
  delivered: number;
  dead: number;
  no_receiver: number;
  tasks_pending: number;
  oldest_pending_at: number | null;
  image_bytes: number;
  image_limit_bytes: number;
  images_dropped: number;
}

const checkEvent = compileCheck<NewEvent>(NewEvent, 'event');

/**
 * What names a clip in a video task's alarm (engine/clips/alarm-clips.ts): attach() writes the clip's
 * row inside the event's transaction and says what the body carries; stored() runs once it committed.
 */
export interface EventClips {
  attach(body: Extract<CallbackBody, { event: 'message' }>): ClipRef | undefined;
  stored(body: CallbackBody): void;
}

/** What the outbox needs to know of tasks: which are still listed (their settled events stay longer). */
export interface ListedTasks {
  listedTaskIds(): readonly string[];
}

/**
 * The durable outbox of result events. enqueue() commits the event before it returns, so nothing the
 * analysis handed over is lost to kill -9 or power loss; delivery state is written more cheaply (see
 * the connection policy in outbox-repository.ts).
 */
export class Outbox {
  readonly options: OutboxOptions;
  /** Events refused as invalid, counted for task health and GET /api/system. */
  readonly refused = new RefusedEvents();
  private imageBytes: number;
  /** Each stored alarm joins or opens its review item in the transaction that stores it. */
  private readonly grouping: AlarmGrouping;
  /** The site-wide callback URL (default-receiver.ts) for a task without a report_url; "" for none. */
  defaultReportUrl: () => string = () => '';
  /** Alarm clips; none until the engine wires them. */
  clips?: EventClips;

  constructor(
    private readonly store: OutboxRepository,
    private readonly tasks: ListedTasks,
    private readonly clock: Clock,
    readonly bus: EventBus,
    options: Partial<OutboxOptions> = {},
  ) {
    this.options = { ...OUTBOX_DEFAULTS, ...options };
    this.imageBytes = store.imageTotal();
    this.grouping = new AlarmGrouping(store.items);
  }

  /**
   * Stores one event and returns the body that will be POSTed: the event plus a random event_id and
   * the task's next seq (previous + 1, gap-free). Durable when it returns; then the delivery worker,
   * the MQTT publisher and the console feed hear of it through the bus.
   */
  enqueue(given: ReportTarget, event: NewEvent): CallbackBody {
    const target = this.receiverOf(given);
    const checked = checkEvent(event);
    if (!checked.ok) {
      this.refused.add(event.task_id, checked.error);
      throw new Error(`outbox: refusing an invalid event: ${checked.error}`);
    }
    if (event.task_id !== target.task_id)
      throw new Error(`outbox: event of task ${event.task_id} enqueued for task ${target.task_id}`);
    const stored = this.store.transaction(() => {
      const seq = this.store.nextSeq(target.task_id, target.report_url, target.report_secret ?? '');
      const { data, ...head } = event;
      const body = { ...head, event_id: randomUUID(), seq, data } as CallbackBody;
      // Written before the event is acknowledged, so the stored body names its clip.
      const clip = body.event === 'message' ? this.clips?.attach(body) : undefined;
      if (clip && body.event === 'message') body.data = { ...body.data, clip };
      return this.insert(target, body);
    });
    this.clips?.stored(stored.body);
    this.bus.emit('event', stored);
    return stored.body;
  }

  /**
   * Stores events that another node stored and did not see delivered (cluster mode: this node took
   * their task over), with their event_id and seq, to be delivered from here; and continues the
   * task's seq after `lastSeq`. Events this node holds already are not stored twice. Those up to
   * `settledSeq` were settled by an earlier owner: stored for MQTT to publish, not sent again.
   */
  adopt(given: ReportTarget, bodies: readonly CallbackBody[], lastSeq: number, settledSeq = 0): void {
    const target = this.receiverOf(given);
    const stored = this.store.transaction(() => {
      this.store.continueSeq(target.task_id, lastSeq, target.report_url, target.report_secret ?? '');
      return bodies
        .filter((body) => !this.store.byEventId(body.event_id))
        .map((body) =>
          this.insert(
            target,
            body,
            body.seq <= settledSeq ? { state: settledState(target), at: this.clock.now() } : undefined,
          ),
        );
    });
    for (const event of stored) this.bus.emit('event', event);
  }

  /**
   * Stores an event another node stored for a task this node now runs, after it had lost the task
   * (cluster mode): the next seq, its own event_id, marked late. One this node holds already is not
   * stored again.
   */
  enqueueLate(given: ReportTarget, body: CallbackBody): void {
    const target = this.receiverOf(given);
    const stored = this.store.transaction(() => {
      if (this.store.byEventId(body.event_id)) return undefined;
      const seq = this.store.nextSeq(target.task_id, target.report_url, target.report_secret ?? '');
      return this.insert(target, { ...body, seq, late: true });
    });
    if (stored) this.bus.emit('event', stored);
  }

  /**
   * Copies in events of a task that other nodes stored and settled (cluster mode: the task leaves the
   * site with this node), with their event_id and seq, settled (never sent from here) and dated when
   * they were made: its history is whole here. One whose event_id or seq this node holds is not
   * stored twice; no event is announced. Returns how many were copied.
   */
  importHistory(target: ReportTarget, bodies: readonly CallbackBody[]): number {
    const settled = settledState(target);
    return this.store.transaction(
      () =>
        bodies
          .filter(
            (body) => !this.store.byEventId(body.event_id) && !this.store.hasSeq(body.task_id, body.seq),
          )
          .map((body) => this.insert(target, body, { state: settled, at: body.timestamp })).length,
    );
  }

  /**
   * Stops delivering a task's events from this node (cluster mode: another node runs the task and
   * delivers them from its chain): its pending events are deleted here. Returns how many.
   */
  release(taskId: string): number {
    const dropped = this.store.dropPending(taskId);
    this.imageBytes = this.store.imageTotal();
    return dropped;
  }

  /** The target with the site-wide default receiver for a task that names none; its own URL wins. */
  private receiverOf(target: ReportTarget): ReportTarget {
    return target.report_url === '' ? { ...target, report_url: this.defaultReportUrl() } : target;
  }

  /** Stores one event whose event_id and seq are given (its state and time too, when given); within the caller's transaction. */
  private insert(
    target: ReportTarget,
    body: CallbackBody,
    given?: { state: DeliveryState; at: number },
  ): StoredEvent {
    const now = given?.at ?? this.clock.now();
    const json = JSON.stringify(body);
    const imageBytes = body.event === 'message' ? body.data.rules.reduce((n, r) => n + r.image.length, 0) : 0;
    const state: DeliveryState = given?.state ?? (target.report_url === '' ? 'no_receiver' : 'pending');
    const row = {
      event_id: body.event_id,
      task_id: body.task_id,
      seq: body.seq,
      kind: body.event,
      app_id: body.app_id,
      timestamp: body.timestamp,
      body: json,
      image_bytes: imageBytes,
      state,
      created_at: now,
      deadline_at: now + this.options.retryForMs,
      ...alarmFacts(body),
    };
    const id = this.store.insert(row);
    this.grouping.place(id, body, row);
    this.imageBytes += imageBytes;
    const dropped = this.boundImages(id);
    const delivery = toRecord({
      ...row,
      id,
      image_dropped: dropped ? 1 : 0,
      attempts: 0,
      next_attempt_at: now,
      delivered_at: null,
      http_status: null,
      answer_code: null,
      answer_msg: null,
      last_error: null,
    });
    return { id, body, json, delivery };
  }

  /** Tasks with at least one pending event: where the delivery worker starts after a restart. */
  pendingTasks(): string[] {
    return this.store.pendingTasks();
  }

  /** The task's lowest-seq pending event, or undefined when the task has nothing to deliver. */
  head(taskId: string): PendingEvent | undefined {
    return this.store.head(taskId);
  }

  /**
   * Records an attempt on a pending event. A failed one is retried at nextAttemptAt, unless that
   * falls after the event's deadline: then it is dead.
   */
  recordAttempt(event: PendingEvent, outcome: AttemptOutcome, nextAttemptAt: number): void {
    const answer = {
      id: event.id,
      http_status: outcome.http_status,
      answer_code: outcome.answer_code,
      answer_msg: outcome.answer_msg,
    };
    const changed = outcome.ok
      ? this.store.markDelivered({ ...answer, now: this.clock.now() })
      : this.store.markFailed({ ...answer, error: outcome.error, next_attempt_at: nextAttemptAt });
    if (changed) this.bus.emit('delivery', this.recordOf(event.id));
  }

  /**
   * Sends an event again from the start of its backoff (delivered and dead ones too). Durable before
   * it returns. It goes out next for its task, ahead of later seqs still pending.
   */
  redeliver(eventId: string): DeliveryRecord {
    const found = this.store.byEventId(eventId);
    if (!found)
      throw new DomainError<DeliveryErrorKind>('delivery.event_not_found', `no stored event "${eventId}"`);
    const now = this.clock.now();
    if (!this.store.redeliver(eventId, now, now + this.options.retryForMs)) {
      throw new DomainError<DeliveryErrorKind>(
        'delivery.no_receiver',
        `event "${eventId}" cannot be delivered: its task has no report_url (state ${found.state})`,
      );
    }
    const record = this.recordOf(found.id);
    this.bus.emit('delivery', record);
    return record;
  }

  /** One page of a task's events in seq order; undefined when the outbox never saw the task. */
  list(taskId: string, query: EventQuery): EventPage | undefined {
    const lastSeq = this.store.lastSeq(taskId);
    if (lastSeq === undefined) return undefined;
    const page = { taskId, afterSeq: query.after_seq, limit: query.limit, state: query.state };
    const rows = query.with_body ? this.store.pageWithBodies(page) : this.store.page(page);
    const items: EventItem[] = rows.map((row) =>
      'body' in row
        ? { ...toRecord(row), body: JSON.parse(row.body as string) as CallbackBody }
        : toRecord(row),
    );
    const lastRow = rows.at(-1);
    return {
      items,
      last_seq: lastSeq,
      next_after_seq: rows.length === query.limit && lastRow ? lastRow.seq : null,
    };
  }

  /** Stored bodies after a storage id, oldest first: what a console feed missed while away. */
  since(afterId: number, taskId: string | undefined, limit: number): { id: number; json: string }[] {
    return this.store.since(afterId, taskId, limit);
  }

  backlog(): Backlog {
    const counts = this.store.stateCounts();
    const pending = this.store.pendingSummary();
    return {
      pending: counts.pending ?? 0,
      delivered: counts.delivered ?? 0,
      dead: counts.dead ?? 0,
      no_receiver: counts.no_receiver ?? 0,
      tasks_pending: pending.tasks,
      oldest_pending_at: pending.oldest,
      image_bytes: this.imageBytes,
      image_limit_bytes: this.options.imageLimitBytes,
      images_dropped: this.store.droppedCount(),
    };
  }

  /**
   * Deletes what nobody needs any more: delivered (and receiver-less) events 24 h old whose task has
   * left the listing, or 7 days old in any case; dead ones 7 days old whose task has left. Pending
   * events are never deleted. Returns how many events went.
   */
  purge(): number {
    const now = this.clock.now();
    const removed = this.store.purge(now - DAY_MS, now - 7 * DAY_MS, this.tasks.listedTaskIds());
    this.imageBytes = this.store.imageTotal();
    return removed;
  }

  /**
   * Keeps the stored snapshots under the limit; the events themselves always stay. Returns whether
   * the snapshots of the event just stored (newestId) had to go too.
   */
  private boundImages(newestId: number): boolean {
    let newestDropped = false;
    while (this.imageBytes > this.options.imageLimitBytes) {
      const victims = this.store.imageCandidates(16);
      if (victims.length === 0) break;
      for (const victim of victims) {
        const body = JSON.parse(victim.body) as CallbackBody;
        if (body.event === 'message') for (const rule of body.data.rules) rule.image = '';
        this.store.dropImages(victim.id, JSON.stringify(body));
        this.imageBytes -= victim.image_bytes;
        newestDropped ||= victim.id === newestId;
        if (this.imageBytes <= this.options.imageLimitBytes) break;
      }
    }
    return newestDropped;
  }

  private recordOf(id: number): DeliveryRecord {
    const row = this.store.record(id);
    if (!row) throw new Error(`outbox: event ${id} vanished`);
    return toRecord(row);
  }
}

function toRecord(row: EventRow): DeliveryRecord {
  return {
    event_id: row.event_id,
    task_id: row.task_id,
    seq: row.seq,
    event: row.kind,
    app_id: row.app_id,
    timestamp: row.timestamp,
    created_at: row.created_at,
    state: row.state,
    attempts: row.attempts,
    next_attempt_at: row.state === 'pending' ? row.next_attempt_at : null,
    deadline_at: row.deadline_at,
    delivered_at: row.delivered_at,
    http_status: row.http_status,
    answer_code: row.answer_code,
    answer_msg: row.answer_msg,
    last_error: row.last_error,
    image_dropped: row.image_dropped === 1,
  };
}

/** How an event an earlier owner settled is stored here: delivered, or no_receiver without a report URL. */
const settledState = (target: ReportTarget): DeliveryState =>
  target.report_url === '' ? 'no_receiver' : 'delivered';
