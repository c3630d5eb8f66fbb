import type { TaskRepository } from './task-repository';

/**
 * Which packages tasks use: the stored tasks that are not closed, and the tasks being started that
 * are not stored yet. Made before the package registry (which refuses to remove a package in use) and
 * the task registry (which marks its starts), so neither needs the other.
 */
export class PackageUse {
  /** task_id -> zapk_id of the tasks being started. */
  private readonly starting = new Map<string, string>();

  constructor(private readonly tasks: Pick<TaskRepository, 'usesPackage'>) {}

  starts(taskId: string, zapkId: string): void {
    this.starting.set(taskId, zapkId);
  }

  started(taskId: string): void {
    this.starting.delete(taskId);
  }

  uses(zapkId: string): boolean {
    return [...this.starting.values()].includes(zapkId) || this.tasks.usesPackage(zapkId);
  }
}
