import type { AlarmFacts } from '../events/alarm-facts';
import type { DeliveryState } from '../events/delivery';
import { ReviewItemsRepository } from '../events/review-items-repository';
import type { Db } from '../store/db';

/**
 * The outbox's tables, `events` and `outbox_tasks` (a task's last seq and where its events go). Every
 * statement is prepared once on the engine's one connection.
 *
 * Connection policy: one connection, synchronous=FULL (engine/store/db.ts), so a stored event survives
 * power loss. Delivery marks and purges alone commit with synchronous=NORMAL (`relaxed`): one lost to
 * a power cut only sends an event again, which at-least-once delivery allows, and it spares every
 * delivery an fsync.
 */
export class OutboxRepository {
  private readonly sql;
  /** The review items the events' alarms are grouped into (written in the same transactions). */
  readonly items: ReviewItemsRepository;

  constructor(private readonly db: Db) {
    this.items = new ReviewItemsRepository(db);
    this.sql = {
      nextSeq: db.prepare<[string, string, string], { last_seq: number }>(
        `INSERT INTO outbox_tasks (task_id, last_seq, report_url, report_secret) VALUES (?, 1, ?, ?)
         ON CONFLICT (task_id) DO UPDATE SET last_seq = last_seq + 1,
           report_url = excluded.report_url, report_secret = excluded.report_secret
         RETURNING last_seq`,
      ),
      continueSeq: db.prepare<[string, number, string, string]>(
        `INSERT INTO outbox_tasks (task_id, last_seq, report_url, report_secret) VALUES (?, ?, ?, ?)
         ON CONFLICT (task_id) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq),
           report_url = excluded.report_url, report_secret = excluded.report_secret`,
      ),
      dropPending: db.prepare<[string], { item_id: string | null }>(
        "DELETE FROM events WHERE task_id = ? AND state = 'pending' RETURNING item_id",
      ),
      insert: db.prepare<NewEventRow, { id: number }>(
        `INSERT INTO events (event_id, task_id, seq, kind, app_id, timestamp, body, image_bytes, state,
           next_attempt_at, deadline_at, created_at, rules, classes, max_score)
         VALUES (@event_id, @task_id, @seq, @kind, @app_id, @timestamp, @body, @image_bytes, @state,
           @created_at, @deadline_at, @created_at, @rules, @classes, @max_score)
         RETURNING id`,
      ),
      imageCandidates: db.prepare<[number], ImageCandidate>(
        // Delivered (or undeliverable) events lose their snapshots before pending ones, oldest first.
        `SELECT id, body, image_bytes FROM events WHERE image_dropped = 0 AND image_bytes > 0
         ORDER BY state = 'pending', id LIMIT ?`,
      ),
      dropImages: db.prepare<[string, number]>('UPDATE events SET body = ?, image_dropped = 1 WHERE id = ?'),
      record: db.prepare<[number], EventRow>(`SELECT ${RECORD_COLUMNS} FROM events WHERE id = ?`),
      head: db.prepare<[string], PendingEvent>(
        `SELECT e.id, e.event_id, e.task_id, e.seq, e.body AS json, e.attempts, e.next_attempt_at,
           e.deadline_at, t.report_url, t.report_secret
         FROM events e JOIN outbox_tasks t ON t.task_id = e.task_id
         WHERE e.task_id = ? AND e.state = 'pending' ORDER BY e.seq LIMIT 1`,
      ),
      pendingTasks: db.prepare<[], { task_id: string }>(
        "SELECT DISTINCT task_id FROM events WHERE state = 'pending'",
      ),
      delivered: db.prepare<DeliveredMark>(
        `UPDATE events SET state = 'delivered', delivered_at = @now, attempts = attempts + 1,
           http_status = @http_status, answer_code = @answer_code, answer_msg = @answer_msg, last_error = NULL
         WHERE id = @id AND state = 'pending'`,
      ),
      failed: db.prepare<FailedMark>(
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
      hasSeq: db.prepare<[string, number], { id: number }>(
        'SELECT id FROM events WHERE task_id = ? AND seq = ?',
      ),
      byEventId: db.prepare<[string], { id: number; state: DeliveryState }>(
        'SELECT id, state FROM events WHERE event_id = ?',
      ),
      lastSeq: db.prepare<[string], { last_seq: number }>(
        'SELECT last_seq FROM outbox_tasks WHERE task_id = ?',
      ),
      imageTotal: db.prepare<[], { total: number | null }>(
        'SELECT SUM(image_bytes) AS total FROM events WHERE image_dropped = 0',
      ),
      page: db.prepare<[string, number, number], EventRow>(
        `SELECT ${RECORD_COLUMNS} FROM events WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
      ),
      pageWithBody: db.prepare<[string, number, number], EventRow & { body: string }>(
        `SELECT ${RECORD_COLUMNS}, body FROM events WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
      ),
      pageInState: db.prepare<[string, number, DeliveryState, number], EventRow>(
        `SELECT ${RECORD_COLUMNS} FROM events WHERE task_id = ? AND seq > ? AND state = ? ORDER BY seq LIMIT ?`,
      ),
      pageInStateWithBody: db.prepare<[string, number, DeliveryState, number], EventRow & { body: string }>(
        `SELECT ${RECORD_COLUMNS}, body FROM events WHERE task_id = ? AND seq > ? AND state = ?
         ORDER BY seq LIMIT ?`,
      ),
      since: db.prepare<[number, number], StoredBody>(
        'SELECT id, body AS json FROM events WHERE id > ? ORDER BY id LIMIT ?',
      ),
      sinceOfTask: db.prepare<[number, string, number], StoredBody>(
        'SELECT id, body AS json FROM events WHERE id > ? AND task_id = ? ORDER BY id LIMIT ?',
      ),
      stateCounts: db.prepare<[], { state: DeliveryState; n: number }>(
        'SELECT state, COUNT(*) AS n FROM events GROUP BY state',
      ),
      pendingSummary: db.prepare<[], { tasks: number; oldest: number | null }>(
        "SELECT COUNT(DISTINCT task_id) AS tasks, MIN(created_at) AS oldest FROM events WHERE state = 'pending'",
      ),
      fromId: db.prepare<[number, number], EventSummary>(
        'SELECT id, task_id, seq, app_id, body FROM events WHERE id >= ? ORDER BY id LIMIT ?',
      ),
      countAfter: db.prepare<[number], { n: number }>('SELECT COUNT(*) AS n FROM events WHERE id > ?'),
      maxId: db.prepare<[], { id: number | null }>('SELECT MAX(id) AS id FROM events'),
      droppedCount: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM events WHERE image_dropped = 1'),
      purgeEvents: db.prepare<{ day: number; week: number; listed: string }, { item_id: string | null }>(
        `DELETE FROM events WHERE state != 'pending' AND (
           created_at <= @week AND (state != 'dead' OR task_id NOT IN (SELECT value FROM json_each(@listed)))
           OR created_at <= @day AND state != 'dead' AND task_id NOT IN (SELECT value FROM json_each(@listed)))
         RETURNING item_id`,
      ),
      purgeTasks: db.prepare<{ listed: string }>(
        `DELETE FROM outbox_tasks WHERE task_id NOT IN (SELECT value FROM json_each(@listed))
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.task_id = outbox_tasks.task_id)`,
      ),
    };
  }

  /** Runs `work` in one transaction (committed with synchronous=FULL). */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  /** The task's next seq (previous + 1, gap-free), recording where its events go from now on. */
  nextSeq(taskId: string, reportUrl: string, reportSecret: string): number {
    const seq = this.sql.nextSeq.get(taskId, reportUrl, reportSecret)?.last_seq;
    if (seq === undefined) throw new Error('outbox: no seq was assigned');
    return seq;
  }

  /** The task's seq goes on after `lastSeq` (or after its own last, when later). */
  continueSeq(taskId: string, lastSeq: number, reportUrl: string, reportSecret: string): void {
    this.sql.continueSeq.run(taskId, lastSeq, reportUrl, reportSecret);
  }

  /** Deletes a task's pending events, and the review items left without an alarm; returns how many events. */
  dropPending(taskId: string): number {
    return this.db.transaction(() => this.forgetItems(this.sql.dropPending.all(taskId)))();
  }

  /** Deletes the review items of deleted events that have no alarm left; returns how many events. */
  private forgetItems(deleted: ReadonlyArray<{ item_id: string | null }>): number {
    this.items.forgetEmpty([...new Set(deleted.flatMap((row) => (row.item_id ? [row.item_id] : [])))]);
    return deleted.length;
  }

  /** Stores an event; returns its storage id. */
  insert(row: NewEventRow): number {
    const inserted = this.sql.insert.get(row);
    if (!inserted) throw new Error('outbox: the event was not stored');
    return inserted.id;
  }

  imageCandidates(limit: number): ImageCandidate[] {
    return this.sql.imageCandidates.all(limit);
  }

  dropImages(id: number, body: string): void {
    this.sql.dropImages.run(body, id);
  }

  imageTotal(): number {
    return this.sql.imageTotal.get()?.total ?? 0;
  }

  record(id: number): EventRow | undefined {
    return this.sql.record.get(id);
  }

  head(taskId: string): PendingEvent | undefined {
    return this.sql.head.get(taskId);
  }

  pendingTasks(): string[] {
    return this.sql.pendingTasks.all().map((row) => row.task_id);
  }

  /** Marks a pending event delivered; false when it was no longer pending. */
  markDelivered(mark: DeliveredMark): boolean {
    return this.relaxed(() => this.sql.delivered.run(mark).changes > 0);
  }

  /** Records a failed attempt on a pending event (dead past its deadline); false when it was no longer pending. */
  markFailed(mark: FailedMark): boolean {
    return this.relaxed(() => this.sql.failed.run(mark).changes > 0);
  }

  /** Whether the task has an event of that seq stored. */
  hasSeq(taskId: string, seq: number): boolean {
    return this.sql.hasSeq.get(taskId, seq) !== undefined;
  }

  byEventId(eventId: string): { id: number; state: DeliveryState } | undefined {
    return this.sql.byEventId.get(eventId);
  }

  /** Makes an event pending again from now; false when its task has no receiver. */
  redeliver(eventId: string, now: number, deadline: number): boolean {
    return this.sql.redeliver.get({ now, deadline, event_id: eventId }) !== undefined;
  }

  /** The task's last seq; undefined when the outbox never saw the task. */
  lastSeq(taskId: string): number | undefined {
    return this.sql.lastSeq.get(taskId)?.last_seq;
  }

  /** Events of a task after a seq, in seq order, optionally only those in one state. */
  page({ taskId, afterSeq, limit, state }: PageQuery): EventRow[] {
    return state === undefined
      ? this.sql.page.all(taskId, afterSeq, limit)
      : this.sql.pageInState.all(taskId, afterSeq, state, limit);
  }

  /** page() with each event's stored body. */
  pageWithBodies({ taskId, afterSeq, limit, state }: PageQuery): Array<EventRow & { body: string }> {
    return state === undefined
      ? this.sql.pageWithBody.all(taskId, afterSeq, limit)
      : this.sql.pageInStateWithBody.all(taskId, afterSeq, state, limit);
  }

  /** Stored bodies after a storage id, oldest first, of one task or all. */
  since(afterId: number, taskId: string | undefined, limit: number): StoredBody[] {
    return taskId ? this.sql.sinceOfTask.all(afterId, taskId, limit) : this.sql.since.all(afterId, limit);
  }

  /** Stored events from a storage id on, oldest first: what the MQTT publisher sends. */
  fromId(id: number, limit: number): EventSummary[] {
    return this.sql.fromId.all(id, limit);
  }

  /** How many events were stored after a storage id. */
  countAfter(id: number): number {
    return this.sql.countAfter.get(id)?.n ?? 0;
  }

  /** The newest event's storage id; 0 when none is stored. */
  maxId(): number {
    return this.sql.maxId.get()?.id ?? 0;
  }

  stateCounts(): Partial<Record<DeliveryState, number>> {
    return Object.fromEntries(this.sql.stateCounts.all().map((row) => [row.state, row.n]));
  }

  pendingSummary(): { tasks: number; oldest: number | null } {
    return this.sql.pendingSummary.get() ?? { tasks: 0, oldest: null };
  }

  droppedCount(): number {
    return this.sql.droppedCount.get()?.n ?? 0;
  }

  /**
   * Deletes settled events: 7 days old (dead ones only once their task has left `listed`), or 24 h old
   * once their task has left it, and the review items left without an alarm; then the seq records of
   * tasks gone with no event left. Returns how many events went.
   */
  purge(day: number, week: number, listed: readonly string[]): number {
    const json = JSON.stringify(listed);
    return this.relaxed(() =>
      this.db.transaction(() => {
        const gone = this.forgetItems(this.sql.purgeEvents.all({ day, week, listed: json }));
        this.sql.purgeTasks.run({ listed: json });
        return gone;
      })(),
    );
  }

  /** Commits `write` with synchronous=NORMAL (see the connection policy above). */
  private relaxed<T>(write: () => T): T {
    // Inside a transaction the pragma cannot change; the write then commits with the transaction.
    if (this.db.inTransaction) return write();
    const policy = this.db.pragma('synchronous', { simple: true }) as number;
    this.db.pragma('synchronous = NORMAL');
    try {
      return write();
    } finally {
      this.db.pragma(`synchronous = ${policy}`);
    }
  }
}

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

export interface NewEventRow extends AlarmFacts {
  event_id: string;
  task_id: string;
  seq: number;
  kind: string;
  app_id: string;
  timestamp: number;
  body: string;
  image_bytes: number;
  state: DeliveryState;
  created_at: number;
  deadline_at: number;
}

export interface EventRow {
  id: number;
  event_id: string;
  task_id: string;
  seq: number;
  kind: string;
  app_id: string;
  timestamp: number;
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

export interface PageQuery {
  taskId: string;
  afterSeq: number;
  limit: number;
  state?: DeliveryState;
}

export interface ImageCandidate {
  id: number;
  body: string;
  image_bytes: number;
}

export interface EventSummary {
  id: number;
  task_id: string;
  seq: number;
  app_id: string;
  body: string;
}

export interface StoredBody {
  id: number;
  json: string;
}

interface AttemptAnswer {
  id: number;
  http_status: number | null;
  answer_code: number | null;
  answer_msg: string | null;
}

export interface DeliveredMark extends AttemptAnswer {
  now: number;
}

export interface FailedMark extends AttemptAnswer {
  error: string | null;
  next_attempt_at: number;
}

const RECORD_COLUMNS = `id, event_id, task_id, seq, kind, app_id, timestamp, image_dropped, state, attempts,
  next_attempt_at, deadline_at, created_at, delivered_at, http_status, answer_code, answer_msg, last_error`;
