/** Tasks whose refusals are remembered at most; past it the task first counted is forgotten. */
const TASKS_REMEMBERED = 10_000;

/**
 * Events the outbox refused because they broke the callback schema. None ever should be: each is an
 * alarm lost to a defect, so each is counted (in all and per task, since the engine started) where
 * operators look, task health, GET /api/system and the System page, not only in a log line.
 */
export class RefusedEvents {
  private readonly perTask = new Map<string, number>();
  private count = 0;
  private reason: string | null = null;

  add(taskId: string, reason: string): void {
    this.count += 1;
    this.reason = reason;
    const before = this.perTask.get(taskId) ?? 0;
    this.perTask.delete(taskId);
    this.perTask.set(taskId, before + 1);
    if (this.perTask.size > TASKS_REMEMBERED) this.perTask.delete(this.perTask.keys().next().value as string);
  }

  /** The task's refused events since the engine started. */
  of(taskId: string): number {
    return this.perTask.get(taskId) ?? 0;
  }

  get total(): number {
    return this.count;
  }

  /** Why the last one was refused; null before the first. */
  get lastReason(): string | null {
    return this.reason;
  }
}
