import type { Db } from '../store/db';
import type { TaskGpu } from './limits';
import type { CloseCode, TaskMode, TaskStatus } from './schema';
import type { TaskStore } from './task-store';

/** A row of the `tasks` table: JSON columns (app_ids, osd, app_configs) as their text. */
export interface TaskRow {
  task_id: string;
  /** The given name; '' when none was given. */
  name: string;
  mode: TaskMode;
  zapk_id: string;
  app_ids: string;
  device_id: string;
  business_id: string;
  video_url: string;
  /** The sub-stream analysed instead of video_url (issue 36); null when none. */
  analysis_url: string | null;
  report_url: string;
  osd: string;
  app_configs: string;
  status: TaskStatus;
  close_code: number;
  dump: string;
  created_at: number;
  updated_at: number;
  closed_at: number | null;
  last_image_at: number | null;
  report_secret: string;
  polygon_width: number | null;
  polygon_height: number | null;
  unclean_resumes: number;
  /** The rate the caller gave; null follows the engine's analysis_fps. */
  analysis_fps: number | null;
  /** The priority the caller gave (cluster placement); null: the default. */
  priority: number | null;
  /** 1: a lost stream is retried for as long as the task exists, never closed for it (0 or 1, SQLite's boolean). */
  persistent: number;
  /**
   * The motion gate: 1 on (the default), 2 on and detecting on crops (gate_regions), 0 off: every
   * analysed frame is detected whole.
   */
  motion_gate: number;
  /** The GPU constraint the caller gave (cluster placement); null: none. */
  gpu: TaskGpu | null;
  /** Per app_id, this camera's overrides of the app's rule (RuleOverrides as JSON text); '{}' when none. */
  rule_overrides: string;
}

export type NewTaskRow = Omit<TaskRow, 'unclean_resumes'>;

/** A row as the listing reads it: neither the secret nor the areas (app_configs), the bulk of a row. */
export type ListedRow = Omit<TaskRow, 'app_configs' | 'report_secret'>;

/** Which tasks a listing shows: closed or not, of one mode; undefined is any. */
export interface TaskFilter {
  closed?: boolean;
  mode?: TaskMode;
}

/** One page of the listing, oldest first. */
export interface TaskPageQuery extends TaskFilter {
  limit: number;
  offset: number;
}

/** The columns of a listed row without its areas. */
const LISTED_COLUMNS = `task_id, name, mode, zapk_id, app_ids, device_id, business_id, video_url, analysis_url, report_url,
  osd, status, close_code, dump, created_at, updated_at, closed_at, last_image_at, polygon_width, polygon_height,
  unclean_resumes, analysis_fps, priority, persistent, motion_gate, gpu, rule_overrides`;
const FILTER = `(@closed IS NULL OR (status = 'closed') = @closed) AND (@mode IS NULL OR mode = @mode)`;
type FilterParams = { closed: number | null; mode: TaskMode | null };
type PageParams = FilterParams & { limit: number; offset: number };

/** What update-task changes of a row. */
export interface TaskChange {
  task_id: string;
  name: string;
  analysis_fps: number | null;
  priority: number | null;
  persistent: number;
  motion_gate: number;
  gpu: TaskGpu | null;
  app_ids: string;
  app_configs: string;
  rule_overrides: string;
  osd: string;
  polygon_width: number | null;
  polygon_height: number | null;
  updated_at: number;
}

/**
 * The `tasks` table: every statement prepared once on the engine's one connection (engine/store/db.ts),
 * typed rows in and out. The task registry decides; this only reads and writes.
 */
export class TaskRepository implements TaskStore {
  private readonly sql;

  constructor(db: Db) {
    this.sql = {
      insert: db.prepare<NewTaskRow>(
        `INSERT INTO tasks (task_id, name, mode, zapk_id, app_ids, device_id, business_id, video_url, analysis_url, report_url,
           osd, app_configs, status, close_code, dump, created_at, updated_at, closed_at, last_image_at,
           report_secret, polygon_width, polygon_height, analysis_fps, priority, persistent, motion_gate, gpu,
           rule_overrides)
         VALUES (@task_id, @name, @mode, @zapk_id, @app_ids, @device_id, @business_id, @video_url, @analysis_url, @report_url,
           @osd, @app_configs, @status, @close_code, @dump, @created_at, @updated_at, @closed_at, @last_image_at,
           @report_secret, @polygon_width, @polygon_height, @analysis_fps, @priority, @persistent, @motion_gate, @gpu,
           @rule_overrides)`,
      ),
      find: db.prepare<[string], TaskRow>('SELECT * FROM tasks WHERE task_id = ?'),
      page: db.prepare<PageParams, ListedRow>(
        `SELECT ${LISTED_COLUMNS} FROM tasks WHERE ${FILTER}
         ORDER BY created_at, task_id LIMIT @limit OFFSET @offset`,
      ),
      areas: db.prepare<[string], { app_configs: string }>('SELECT app_configs FROM tasks WHERE task_id = ?'),
      count: db.prepare<FilterParams, { n: number }>(`SELECT COUNT(*) AS n FROM tasks WHERE ${FILTER}`),
      statusCounts: db.prepare<[], { status: TaskStatus; n: number }>(
        'SELECT status, COUNT(*) AS n FROM tasks GROUP BY status',
      ),
      notClosed: db.prepare<[], TaskRow>(
        "SELECT * FROM tasks WHERE status != 'closed' ORDER BY created_at, task_id",
      ),
      ids: db.prepare<[], { task_id: string }>('SELECT task_id FROM tasks'),
      secret: db.prepare<[string], { report_secret: string }>(
        'SELECT report_secret FROM tasks WHERE task_id = ?',
      ),
      change: db.prepare<TaskChange>(
        `UPDATE tasks SET name = @name, analysis_fps = @analysis_fps, priority = @priority, persistent = @persistent, motion_gate = @motion_gate, gpu = @gpu, app_ids = @app_ids, app_configs = @app_configs, rule_overrides = @rule_overrides, osd = @osd,
           polygon_width = @polygon_width, polygon_height = @polygon_height, updated_at = @updated_at
         WHERE task_id = @task_id`,
      ),
      close: db.prepare<[number, string, number, number, string]>(
        "UPDATE tasks SET status = 'closed', close_code = ?, dump = ?, closed_at = ?, updated_at = ? WHERE task_id = ?",
      ),
      status: db.prepare<[TaskStatus, string, number, string]>(
        "UPDATE tasks SET status = ?, dump = ?, updated_at = ? WHERE task_id = ? AND status != 'closed'",
      ),
      image: db.prepare<[number, string, number, string]>(
        'UPDATE tasks SET last_image_at = ?, dump = ?, updated_at = ? WHERE task_id = ?',
      ),
      usesPackage: db.prepare<[string], { one: number }>(
        "SELECT 1 AS one FROM tasks WHERE zapk_id = ? AND status != 'closed' LIMIT 1",
      ),
      countResume: db.prepare(
        "UPDATE tasks SET unclean_resumes = unclean_resumes + 1 WHERE status != 'closed' AND mode = 'video'",
      ),
      resetResumes: db.prepare(
        "UPDATE tasks SET unclean_resumes = 0 WHERE status != 'closed' AND mode = 'video'",
      ),
      resumedHealthy: db.prepare<[string]>('UPDATE tasks SET unclean_resumes = 0 WHERE task_id = ?'),
      purge: db.prepare<[number]>("DELETE FROM tasks WHERE status = 'closed' AND closed_at <= ?"),
      purgeOne: db.prepare<[string]>("DELETE FROM tasks WHERE task_id = ? AND status = 'closed'"),
      forget: db.prepare<[string]>('DELETE FROM tasks WHERE task_id = ?'),
    };
    this.replaceRow = db.transaction((row: NewTaskRow) => {
      this.sql.forget.run(row.task_id);
      this.sql.insert.run(row);
    });
  }

  private readonly replaceRow: (row: NewTaskRow) => void;

  /** Stores a task another node ran until now (cluster mode), over whatever this node kept of it. */
  replace(row: NewTaskRow): void {
    this.replaceRow(row);
  }

  /** Deletes a task this node no longer runs (cluster mode: it runs elsewhere now), closed or not. */
  forget(taskId: string): void {
    this.sql.forget.run(taskId);
  }

  insert(row: NewTaskRow): void {
    this.sql.insert.run(row);
  }

  find(taskId: string): TaskRow | undefined {
    return this.sql.find.get(taskId);
  }

  /** One page of the listed tasks (closed ones until they are purged), oldest first. */
  page(query: TaskPageQuery): ListedRow[] {
    const params = { ...filterParams(query), limit: query.limit, offset: query.offset };
    return this.sql.page.all(params);
  }

  /** The task's app_configs as stored (JSON text); undefined when there is no such task. */
  areas(taskId: string): string | undefined {
    return this.sql.areas.get(taskId)?.app_configs;
  }

  /** How many listed tasks the filter matches. */
  count(filter: TaskFilter): number {
    return this.sql.count.get(filterParams(filter))?.n ?? 0;
  }

  /** Listed tasks by status. */
  statusCounts(): Partial<Record<TaskStatus, number>> {
    return Object.fromEntries(this.sql.statusCounts.all().map((row) => [row.status, row.n]));
  }

  notClosed(): TaskRow[] {
    return this.sql.notClosed.all();
  }

  /** Ids of every listed task: the outbox keeps the events of these. */
  listedTaskIds(): string[] {
    return this.sql.ids.all().map((row) => row.task_id);
  }

  /** The task's callback signing secret; undefined when it has none (or is gone). */
  secretOf(taskId: string): string | undefined {
    return this.sql.secret.get(taskId)?.report_secret || undefined;
  }

  change(change: TaskChange): void {
    this.sql.change.run(change);
  }

  close(taskId: string, code: CloseCode, dump: string, now: number): void {
    this.sql.close.run(code, dump, now, now, taskId);
  }

  /** Sets the status of a task that is not closed. */
  setStatus(taskId: string, status: TaskStatus, dump: string, now: number): void {
    this.sql.status.run(status, dump, now, taskId);
  }

  imageReceived(taskId: string, dump: string, now: number): void {
    this.sql.image.run(now, dump, now, taskId);
  }

  /** True while a task that is not closed runs an app of the package. */
  usesPackage(zapkId: string): boolean {
    return this.sql.usesPackage.get(zapkId) !== undefined;
  }

  /** Counts one more unclean resume for every live video task, or (after a clean stop) none. */
  countResumes(clean: boolean): void {
    (clean ? this.sql.resetResumes : this.sql.countResume).run();
  }

  resumedHealthy(taskId: string): void {
    this.sql.resumedHealthy.run(taskId);
  }

  /** Deletes closed tasks closed at or before the time. */
  purgeClosed(before: number): void {
    this.sql.purge.run(before);
  }

  /** Deletes one closed task; false when there is no closed task of that id. */
  purgeOne(taskId: string): boolean {
    return this.sql.purgeOne.run(taskId).changes > 0;
  }
}

const filterParams = (filter: TaskFilter): FilterParams => ({
  closed: filter.closed === undefined ? null : Number(filter.closed),
  mode: filter.mode ?? null,
});
