import type { CloseCode, TaskStatus } from '../../engine/tasks/schema';
import type {
  ListedRow,
  NewTaskRow,
  TaskChange,
  TaskFilter,
  TaskPageQuery,
  TaskRow,
} from '../../engine/tasks/task-repository';
import type { TaskSettings, TaskStore } from '../../engine/tasks/task-store';

/**
 * TaskStore in memory, with TaskRepository's semantics (its SQL, statement by statement), for the
 * task lifecycle's unit tests. Rows are copied in and out, as a database would.
 */
export class MemoryTaskStore implements TaskStore {
  private readonly rows = new Map<string, TaskRow>();

  insert(row: NewTaskRow): void {
    if (this.rows.has(row.task_id)) throw new Error(`UNIQUE constraint failed: tasks.task_id ${row.task_id}`);
    this.rows.set(row.task_id, { ...row, unclean_resumes: 0 });
  }

  replace(row: NewTaskRow): void {
    this.rows.delete(row.task_id);
    this.insert(row);
  }

  forget(taskId: string): void {
    this.rows.delete(taskId);
  }

  find(taskId: string): TaskRow | undefined {
    const row = this.rows.get(taskId);
    return row && { ...row };
  }

  page(query: TaskPageQuery): ListedRow[] {
    return this.matching(query)
      .slice(query.offset, query.offset + query.limit)
      .map(({ app_configs: _areas, report_secret: _secret, ...listed }) => listed);
  }

  areas(taskId: string): string | undefined {
    return this.rows.get(taskId)?.app_configs;
  }

  count(filter: TaskFilter): number {
    return this.matching(filter).length;
  }

  statusCounts(): Partial<Record<TaskStatus, number>> {
    const counts: Partial<Record<TaskStatus, number>> = {};
    for (const row of this.rows.values()) counts[row.status] = (counts[row.status] ?? 0) + 1;
    return counts;
  }

  notClosed(): TaskRow[] {
    return this.matching({ closed: false }).map((row) => ({ ...row }));
  }

  change(change: TaskChange): void {
    this.update(change.task_id, () => change);
  }

  close(taskId: string, code: CloseCode, dump: string, now: number): void {
    this.update(taskId, () => ({
      status: 'closed',
      close_code: code,
      dump,
      closed_at: now,
      updated_at: now,
    }));
  }

  setStatus(taskId: string, status: TaskStatus, dump: string, now: number): void {
    this.update(taskId, (row) => (row.status === 'closed' ? {} : { status, dump, updated_at: now }));
  }

  imageReceived(taskId: string, dump: string, now: number): void {
    this.update(taskId, () => ({ last_image_at: now, dump, updated_at: now }));
  }

  usesPackage(zapkId: string): boolean {
    return this.matching({ closed: false }).some((row) => row.zapk_id === zapkId);
  }

  countResumes(clean: boolean): void {
    for (const row of this.matching({ closed: false, mode: 'video' }))
      this.update(row.task_id, () => ({ unclean_resumes: clean ? 0 : row.unclean_resumes + 1 }));
  }

  resumedHealthy(taskId: string): void {
    this.update(taskId, () => ({ unclean_resumes: 0 }));
  }

  purgeClosed(before: number): void {
    for (const row of this.rows.values())
      if (row.status === 'closed' && (row.closed_at ?? 0) <= before) this.rows.delete(row.task_id);
  }

  purgeOne(taskId: string): boolean {
    return this.rows.get(taskId)?.status === 'closed' && this.rows.delete(taskId);
  }

  private matching(filter: TaskFilter): TaskRow[] {
    return [...this.rows.values()]
      .filter(
        (row) =>
          (filter.closed === undefined || (row.status === 'closed') === filter.closed) &&
          (filter.mode === undefined || row.mode === filter.mode),
      )
      .sort((a, b) => a.created_at - b.created_at || a.task_id.localeCompare(b.task_id));
  }

  private update(taskId: string, change: (row: TaskRow) => Partial<TaskRow>): void {
    const row = this.rows.get(taskId);
    if (row) this.rows.set(taskId, { ...row, ...change(row) });
  }
}

/** The registry's settings in memory; a transaction runs its work (nothing here can fail half-way). */
export class MemorySettings implements TaskSettings {
  readonly values = new Map<string, unknown>();

  set(key: string, value: unknown): void {
    this.values.set(key, value);
  }

  remove(key: string): boolean {
    return this.values.delete(key);
  }

  transaction<T>(work: () => T): T {
    return work();
  }
}
