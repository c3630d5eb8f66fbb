import type { TaskRegistry } from '../tasks/registry';
import type { TaskSummary } from '../tasks/schema';
import type { TaskPageQuery } from '../tasks/task-repository';
import { okArrayJson } from './envelope';

/** Bytes of closed tasks' listing elements kept serialized, least recently listed dropped first. */
export const LISTING_CACHE_BYTES = 16 * 1024 * 1024;

/** A closed task's elements of the listing as JSON: without its areas, and with them once asked. */
interface Element {
  plain: Buffer;
  areas?: Buffer;
}

/**
 * GET /api/tasks as JSON, built from each task's element. A closed task never changes until it is
 * purged, so its elements are kept serialized: listing closed tasks then reads neither their polygons
 * from storage nor serializes anything again. The engine's CPU per listing of 60 closed tasks of
 * 62 KB (bench/api.ts): 1.2 ms without areas and 4.7 ms with them (3.8 MB), against 2.1 and 11 ms
 * built afresh each time. Running tasks are built afresh on every listing: their health changes.
 * Areas go out as stored (JSON text), never parsed and serialized again.
 */
export class TaskListing {
  private readonly closed = new Map<string, Element>();
  private bytes = 0;

  constructor(
    private readonly tasks: Pick<TaskRegistry, 'list' | 'storedAreas'>,
    private readonly limitBytes = LISTING_CACHE_BYTES,
  ) {}

  /** One page as the envelope's JSON, and how many tasks the filter matches in all. */
  page(
    query: TaskPageQuery & { withAreas: boolean },
    serialize: (task: TaskSummary) => string,
  ): { json: Buffer; count: number; total: number } {
    const { items, total } = this.tasks.list(query);
    const elements = items.map((task) => this.element(task, query.withAreas, serialize));
    return { json: okArrayJson(elements), count: items.length, total };
  }

  /** Drops what is kept of a task that left the listing. */
  forget(taskId: string): void {
    const element = this.closed.get(taskId);
    if (!element) return;
    this.closed.delete(taskId);
    this.bytes -= size(element);
  }

  private element(task: TaskSummary, withAreas: boolean, serialize: (task: TaskSummary) => string): Buffer {
    if (task.status !== 'closed') return build(task, withAreas, serialize, this.tasks);
    const kept = this.closed.get(task.task_id);
    const element: Element = kept ?? { plain: build(task, false, serialize, this.tasks) };
    if (withAreas) element.areas ??= build(task, true, serialize, this.tasks);
    // Listed now: to the end of the line of what is dropped first.
    this.forget(task.task_id);
    this.closed.set(task.task_id, element);
    this.bytes += size(element);
    for (const [taskId] of this.closed) {
      if (this.bytes <= this.limitBytes) break;
      this.forget(taskId);
    }
    return (withAreas ? element.areas : element.plain) as Buffer;
  }
}

const size = (element: Element) => element.plain.length + (element.areas?.length ?? 0);

/** A task's element: its summary, and with areas its app_configs as stored, spliced in before the end. */
function build(
  task: TaskSummary,
  withAreas: boolean,
  serialize: (task: TaskSummary) => string,
  tasks: Pick<TaskRegistry, 'storedAreas'>,
): Buffer {
  const json = serialize(task);
  if (!withAreas) return Buffer.from(json);
  return Buffer.from(`${json.slice(0, -1)},"app_configs":${tasks.storedAreas(task.task_id)}}`);
}
