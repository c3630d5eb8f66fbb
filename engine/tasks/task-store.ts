import type { PackageRegistry } from '../packages/registry';
import type { SettingsRepository } from '../store/settings-repository';
import type { CloseCode, TaskStatus } from './schema';
import type {
  ListedRow,
  NewTaskRow,
  TaskChange,
  TaskFilter,
  TaskPageQuery,
  TaskRow,
} from './task-repository';

/**
 * What the task registry reads and writes of its tasks: TaskRepository (SQLite) in the engine, an
 * in-memory store in the lifecycle's unit test. The semantics are TaskRepository's.
 */
export interface TaskStore {
  insert(row: NewTaskRow): void;
  /** Stores the row over whatever this node kept of the task. */
  replace(row: NewTaskRow): void;
  forget(taskId: string): void;
  find(taskId: string): TaskRow | undefined;
  page(query: TaskPageQuery): ListedRow[];
  areas(taskId: string): string | undefined;
  count(filter: TaskFilter): number;
  statusCounts(): Partial<Record<TaskStatus, number>>;
  notClosed(): TaskRow[];
  change(change: TaskChange): void;
  close(taskId: string, code: CloseCode, dump: string, now: number): void;
  /** Leaves a closed task as it is. */
  setStatus(taskId: string, status: TaskStatus, dump: string, now: number): void;
  imageReceived(taskId: string, dump: string, now: number): void;
  countResumes(clean: boolean): void;
  resumedHealthy(taskId: string): void;
  purgeClosed(before: number): void;
  purgeOne(taskId: string): boolean;
}

/** The settings the registry keeps: whether the engine stopped cleanly. */
export type TaskSettings = Pick<SettingsRepository, 'set' | 'remove' | 'transaction'>;

/** The installed apps a task runs. */
export type InstalledApps = Pick<PackageRegistry, 'app'>;
