import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Clock } from '../clock';
import { DomainError } from '../domain-error';
import type { EventBus } from '../events/bus';
import type { DeliveryRecord, DeliveryState, EventItem } from '../events/delivery';
import { type CallbackBody, NewEvent } from '../events/schema';
import { compileCheck } from '../schema/ajv';
import type { Db } from '../store/db';
import type { DeliveryErrorKind } from './delivery-error';

/** Where a task's events go. report_url "" stores them without any HTTP delivery. */
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

/** The task's oldest pending event with its target: what the delivery worker sends next. */
export interface PendingEvent {
  id: number;
  event_id: string;
  task_id: string;
  seq: number;
  json: string;
  attempts: number;
  next_attempt_at: number;
  deadline_at: number;
  report_url: string;
  report_secret: string;
}

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

interface EventRow {
  id: number;
  event_id: string;
  task_id: string;
  seq: number;
  kind: string;
  app_id: string;
  timestamp: number;
  body: string;
  image_bytes: number;
  image_dropped: number;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number;
  deadline_at: number;
  created_at: number;
  delivered_at: number | null;
  http_status: number | null;
  answer_code: number | null;
  answer_msg: string | null;
  last_error: string | null;
}

const RECORD_COLUMNS = `id, event_id, task_id, seq, kind, app_id, timestamp, image_dropped, state, attempts,
  next_attempt_at, deadline_at, created_at, delivered_at, http_status, answer_code, answer_msg, last_error`;

const checkEvent = compileCheck<NewEvent>(NewEvent, 'event');

/**
 * The durable outbox of result events. enqueue() commits the event (synchronous=FULL) before it
 * returns, so nothing the analysis handed over is lost to kill -9 or power loss. Delivery state
 * is written through a second connection with synchronous=NORMAL: a state change lost to a power
 * cut only makes an event go out again, which at-least-once delivery allows, and it spares every
 * delivery an fsync.
 */
export class Outbox {
  readonly options: OutboxOptions;
  private readonly marks: Db;
  private imageBytes: number;
  private readonly sql;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly bus: EventBus,
    options: Partial<OutboxOptions> = {},
  ) {
    this.options = { ...OUTBOX_DEFAULTS, ...options };
    this.marks = new Database(db.name);
    this.marks.pragma('synchronous = NORMAL');
    this.marks.pragma('busy_timeout = 5000');
    this.sql = {
      nextSeq: db.prepare<[string, string, string], { last_seq: number }>(
        `INSERT INTO outbox_tasks (task_id, last_seq, report_url, report_secret) VALUES (?, 1, ?, ?)
         ON CONFLICT (task_id) DO UPDATE SET last_seq = last_seq + 1,
           report_url = excluded.report_url, report_secret = excluded.report_secret
         RETURNING last_seq`,
      ),
      insert: db.prepare<Record<string, unknown>, { id: number }>(
        `INSERT INTO events (event_id, task_id, seq, kind, app_id, timestamp, body, image_bytes, state,
           next_attempt_at, deadline_at, created_at)
         VALUES (@event_id, @task_id, @seq, @kind, @app_id, @timestamp, @body, @image_bytes, @state,
           @created_at, @deadline_at, @created_at)
         RETURNING id`,
      ),
      imageCandidates: db.prepare<[number], { id: number; body: string; image_bytes: number }>(
        // Delivered (or undeliverable) events lose their snapshots before pending ones, oldest first.
        `SELECT id, body, image_bytes FROM events WHERE image_dropped = 0 AND image_bytes > 0
         ORDER BY state = 'pending', id LIMIT ?`,
      ),
      dropImages: db.prepare<[string, number]>('UPDATE events SET body = ?, image_dropped = 1 WHERE id = ?'),
      record: this.marks.prepare<[number], EventRow>(`SELECT ${RECORD_COLUMNS} FROM events WHERE id = ?`),
      head: this.marks.prepare<[string], PendingEvent>(
        `SELECT e.id, e.event_id, e.task_id, e.seq, e.body AS json, e.attempts, e.next_attempt_at,
           e.deadline_at, t.report_url, t.report_secret
         FROM events e JOIN outbox_tasks t ON t.task_id = e.task_id
         WHERE e.task_id = ? AND e.state = 'pending' ORDER BY e.seq LIMIT 1`,
      ),
      pendingTasks: this.marks.prepare<[], { task_id: string }>(
        "SELECT DISTINCT task_id FROM events WHERE state = 'pending'",
      ),
      delivered: this.marks.prepare(
        `UPDATE events SET state = 'delivered', delivered_at = @now, attempts = attempts + 1,
           http_status = @http_status, answer_code = @answer_code, answer_msg = @answer_msg, last_error = NULL
         WHERE id = @id AND state = 'pending'`,
      ),
      failed: this.marks.prepare(
        `UPDATE events SET state = CASE WHEN @next_attempt_at > deadline_at THEN 'dead' ELSE 'pending' END,
           next_attempt_at = @next_attempt_at, attempts = attempts + 1, http_status = @http_status,
           answer_code = @answer_code, answer_msg = @answer_msg, last_error = @error
         WHERE id = @id AND state = 'pending'`,
      ),
      redeliver: db.prepare<{ now: number; deadline: number; event_id: string }, { id: number }>(
        `UPDATE events SET state = 'pending', attempts = 0, next_attempt_at = @now, deadline_at = @deadline,
           delivered_at = NULL
         WHERE event_id = @event_id AND state != 'no_receiver' RETURNING id`,
      ),
      byEventId: db.prepare<[string], { id: number; state: DeliveryState }>(
        'SELECT id, state FROM events WHERE event_id = ?',
      ),
      lastSeq: db.prepare<[string], { last_seq: number }>(
        'SELECT last_seq FROM outbox_tasks WHERE task_id = ?',
      ),
      imageTotal: this.marks.prepare<[], { total: number | null }>(
        'SELECT SUM(image_bytes) AS total FROM events WHERE image_dropped = 0',
      ),
    };
    this.imageBytes = this.sql.imageTotal.get()?.total ?? 0;
  }

  /**
   * Stores one event and returns the body that will be POSTed: the event plus a random event_id and
   * the task's next seq (previous + 1, gap-free). Durable when it returns; then the delivery worker,
   * the MQTT publisher and the console feed hear of it through the bus. Call it outside any open
   * transaction of the engine's Db: the worker reads through its own connection.
   */
  enqueue(target: ReportTarget, event: NewEvent): CallbackBody {
    const checked = checkEvent(event);
    if (!checked.ok) throw new Error(`outbox: refusing an invalid event: ${checked.error}`);
    if (event.task_id !== target.task_id)
      throw new Error(`outbox: event of task ${event.task_id} enqueued for task ${target.task_id}`);
    const now = this.clock.now();
    const stored = this.db.transaction(() => {
      const seq = this.sql.nextSeq.get(
        target.task_id,
        target.report_url,
        target.report_secret ?? '',
      )?.last_seq;
      if (seq === undefined) throw new Error('outbox: no seq was assigned');
      const { data, ...head } = event;
      const body = { ...head, event_id: randomUUID(), seq, data } as CallbackBody;
      const json = JSON.stringify(body);
      const imageBytes =
        body.event === 'message' ? body.data.rules.reduce((n, r) => n + r.image.length, 0) : 0;
      const state: DeliveryState = target.report_url === '' ? 'no_receiver' : 'pending';
      const row = {
        event_id: body.event_id,
        task_id: body.task_id,
        seq,
        kind: body.event,
        app_id: body.app_id,
        timestamp: body.timestamp,
        body: json,
        image_bytes: imageBytes,
        state,
        created_at: now,
        deadline_at: now + this.options.retryForMs,
      };
      const inserted = this.sql.insert.get(row);
      if (!inserted) throw new Error('outbox: the event was not stored');
      this.imageBytes += imageBytes;
      const dropped = this.boundImages(inserted.id);
      const delivery = toRecord({
        ...row,
        id: inserted.id,
        image_dropped: dropped ? 1 : 0,
        attempts: 0,
        next_attempt_at: now,
        delivered_at: null,
        http_status: null,
        answer_code: null,
        answer_msg: null,
        last_error: null,
      });
      return { id: inserted.id, body, json, delivery };
    })();
    this.bus.emit('event', stored);
    return stored.body;
  }

  /** Tasks with at least one pending event: where the delivery worker starts after a restart. */
  pendingTasks(): string[] {
    return this.sql.pendingTasks.all().map((row) => row.task_id);
  }

  /** The task's lowest-seq pending event, or undefined when the task has nothing to deliver. */
  head(taskId: string): PendingEvent | undefined {
    return this.sql.head.get(taskId);
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
      ? this.sql.delivered.run({ ...answer, now: this.clock.now() })
      : this.sql.failed.run({ ...answer, error: outcome.error, next_attempt_at: nextAttemptAt });
    if (changed.changes > 0) this.bus.emit('delivery', this.recordOf(event.id));
  }

  /**
   * Sends an event again from the start of its backoff (delivered and dead ones too). Durable before
   * it returns. It goes out next for its task, ahead of later seqs still pending.
   */
  redeliver(eventId: string): DeliveryRecord {
    const found = this.sql.byEventId.get(eventId);
    if (!found)
      throw new DomainError<DeliveryErrorKind>('delivery.event_not_found', `no stored event "${eventId}"`);
    const now = this.clock.now();
    if (!this.sql.redeliver.get({ now, deadline: now + this.options.retryForMs, event_id: eventId })) {
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
    const last = this.sql.lastSeq.get(taskId);
    if (!last) return undefined;
    const rows = this.db
      .prepare<unknown[], EventRow>(
        `SELECT ${RECORD_COLUMNS}${query.with_body ? ', body' : ''} FROM events
         WHERE task_id = ? AND seq > ? ${query.state ? 'AND state = ?' : ''} ORDER BY seq LIMIT ?`,
      )
      .all(taskId, query.after_seq, ...(query.state ? [query.state] : []), query.limit);
    const items: EventItem[] = rows.map((row) =>
      query.with_body ? { ...toRecord(row), body: JSON.parse(row.body) as CallbackBody } : toRecord(row),
    );
    const lastRow = rows.at(-1);
    return {
      items,
      last_seq: last.last_seq,
      next_after_seq: rows.length === query.limit && lastRow ? lastRow.seq : null,
    };
  }

  /** Stored bodies after a storage id, oldest first: what a console feed missed while away. */
  since(afterId: number, taskId: string | undefined, limit: number): { id: number; json: string }[] {
    return this.marks
      .prepare<unknown[], { id: number; json: string }>(
        `SELECT id, body AS json FROM events WHERE id > ? ${taskId ? 'AND task_id = ?' : ''} ORDER BY id LIMIT ?`,
      )
      .all(afterId, ...(taskId ? [taskId] : []), limit);
  }

  backlog(): Backlog {
    const counts = Object.fromEntries(
      this.marks
        .prepare<[], { state: DeliveryState; n: number }>(
          'SELECT state, COUNT(*) AS n FROM events GROUP BY state',
        )
        .all()
        .map((row) => [row.state, row.n]),
    ) as Partial<Record<DeliveryState, number>>;
    const pending = this.marks
      .prepare<[], { tasks: number; oldest: number | null }>(
        "SELECT COUNT(DISTINCT task_id) AS tasks, MIN(created_at) AS oldest FROM events WHERE state = 'pending'",
      )
      .get();
    const dropped = this.marks
      .prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM events WHERE image_dropped = 1')
      .get();
    return {
      pending: counts.pending ?? 0,
      delivered: counts.delivered ?? 0,
      dead: counts.dead ?? 0,
      no_receiver: counts.no_receiver ?? 0,
      tasks_pending: pending?.tasks ?? 0,
      oldest_pending_at: pending?.oldest ?? null,
      image_bytes: this.imageBytes,
      image_limit_bytes: this.options.imageLimitBytes,
      images_dropped: dropped?.n ?? 0,
    };
  }

  /**
   * Deletes what nobody needs any more: delivered (and receiver-less) events 24 h old whose task has
   * left the listing, or 7 days old in any case; dead ones 7 days old whose task has left. Pending
   * events are never deleted. Returns how many events went.
   */
  purge(): number {
    const now = this.clock.now();
    const removed = this.marks.transaction(() => {
      const gone = this.marks
        .prepare(
          `DELETE FROM events WHERE state != 'pending' AND (
             created_at <= @week AND (state != 'dead' OR task_id NOT IN (SELECT task_id FROM tasks))
             OR created_at <= @day AND state != 'dead' AND task_id NOT IN (SELECT task_id FROM tasks))`,
        )
        .run({ day: now - DAY_MS, week: now - 7 * DAY_MS }).changes;
      this.marks.exec(
        `DELETE FROM outbox_tasks WHERE task_id NOT IN (SELECT task_id FROM tasks)
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.task_id = outbox_tasks.task_id)`,
      );
      return gone;
    })();
    this.imageBytes = this.sql.imageTotal.get()?.total ?? 0;
    return removed;
  }

  close(): void {
    this.marks.close();
  }

  /**
   * Keeps the stored snapshots under the limit; the events themselves always stay. Returns whether
   * the snapshots of the event just stored (newestId) had to go too.
   */
  private boundImages(newestId: number): boolean {
    let newestDropped = false;
    while (this.imageBytes > this.options.imageLimitBytes) {
      const victims = this.sql.imageCandidates.all(16);
      if (victims.length === 0) break;
      for (const victim of victims) {
        const body = JSON.parse(victim.body) as CallbackBody;
        if (body.event === 'message') for (const rule of body.data.rules) rule.image = '';
        this.sql.dropImages.run(JSON.stringify(body), victim.id);
        this.imageBytes -= victim.image_bytes;
        newestDropped ||= victim.id === newestId;
        if (this.imageBytes <= this.options.imageLimitBytes) break;
      }
    }
    return newestDropped;
  }

  private recordOf(id: number): DeliveryRecord {
    const row = this.sql.record.get(id);
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
