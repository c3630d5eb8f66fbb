import { TASK_PAGE_LIMIT } from '../tasks/limits';
import type { TaskRegistry } from '../tasks/registry';
import type { TaskListItem, TaskSummary } from '../tasks/schema';
import type { TaskPageQuery, TaskRow } from '../tasks/task-repository';
import { areasOf } from '../tasks/task-view';
import type { ClusterConnection } from './connection';

/**
 * GET /api/tasks on a node of a cluster: every task of the site, each with its live health and the
 * node that runs it. The page is cut from the site's task definitions (every task the site shares,
 * closed ones for 24 h) and this node's own tasks (one it has not shared yet), in the listing's order;
 * then each node that runs tasks of the page is asked for them, all nodes at once (request/reply on
 * `vc.node.<name>.tasks`). A task whose node is not up, or does not answer within
 * LISTING_TIMEOUT_MS, is listed as the site stored it, marked `node_answered: false`: never left out.
 */

/** How long a listing waits for the other nodes' answers; a frozen node costs the listing this once. */
export const LISTING_TIMEOUT_MS = 1_500;

/**
 * How long a read of the site's task definitions serves listings: each read is one KV request per
 * task, and every open console lists twice every 2 s; with this, a node reads the bucket at most once
 * a second however many consoles ask, and a task started on another node is listed within a second.
 */
export const DEFINITIONS_FRESH_MS = 1_000;

/** What a node asks another for: tasks of one page, so at most TASK_PAGE_LIMIT of them. */
interface Asked {
  task_ids: string[];
}

/** What the listing needs of the node it runs on. */
export interface SiteIndex {
  readonly node: string;
  /** Every task definition the site shares now (closed ones for 24 h). */
  definitions(): Promise<TaskRow[]>;
  /** The node the task is assigned to, if any. */
  ownerOf(taskId: string): string | undefined;
  /** Whether the node beats and answers (neither silent nor gone). */
  isUp(node: string): boolean;
}

type Tasks = Pick<TaskRegistry, 'list' | 'storedRow' | 'summarize'>;

export class SiteListing {
  private read?: { at: number; rows: Promise<TaskRow[]> };

  constructor(
    private readonly conn: ClusterConnection,
    private readonly site: SiteIndex,
    private readonly tasks: Tasks,
  ) {}

  /** Answers other nodes' requests for the summaries of tasks this node stores. */
  serve(): void {
    this.conn.nc.subscribe(`vc.node.${this.site.node}.tasks`, {
      callback: (_error, message) => {
        let asked: unknown;
        try {
          asked = message.json<Asked>().task_ids;
        } catch {
          asked = undefined;
        }
        const ids = Array.isArray(asked) ? asked.slice(0, TASK_PAGE_LIMIT) : [];
        const items = ids.flatMap((id) => {
          const row = typeof id === 'string' ? this.tasks.storedRow(id) : undefined;
          return row ? [this.tasks.summarize(row)] : [];
        });
        message.respond(JSON.stringify(items));
      },
    });
  }

  /** One page of the site's listing, and how many tasks of the site the filter matches in all. */
  async page(
    query: TaskPageQuery & { withAreas: boolean },
  ): Promise<{ items: TaskListItem[]; total: number }> {
    const definitions = new Map((await this.definitions()).map((row) => [row.task_id, row]));
    const listed = new Map<string, { task_id: string; created_at: number }>();
    for (const row of definitions.values()) if (matches(row, query)) listed.set(row.task_id, row);
    // This node's own (a task just started, not shared yet; tasks closed before it joined the site).
    const own = this.tasks.list({ ...query, offset: 0, limit: Number.MAX_SAFE_INTEGER }).items;
    for (const task of own) if (!listed.has(task.task_id)) listed.set(task.task_id, task);
    const ordered = [...listed.values()].sort(
      (a, b) => a.created_at - b.created_at || (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0),
    );
    const ids = ordered.slice(query.offset, query.offset + query.limit).map(({ task_id }) => task_id);

    const remote = new Map<string, string[]>();
    for (const id of ids) {
      const owner = this.site.ownerOf(id);
      if (owner && owner !== this.site.node) remote.set(owner, [...(remote.get(owner) ?? []), id]);
    }
    const answers = new Map<string, { node: string; summary?: TaskSummary; why?: string }>();
    await Promise.all(
      [...remote].map(async ([node, asked]) => {
        const got = this.site.isUp(node) ? await this.ask(node, asked) : undefined;
        for (const id of asked) {
          const summary = got?.get(id);
          if (summary) answers.set(id, { node, summary: { ...summary, node, node_answered: true } });
          // Not answered (down, slow), or not there yet (being taken over): as the site stored it.
          else answers.set(id, { node, why: got ? 'has not taken it over yet' : 'did not answer' });
        }
      }),
    );

    const items = ids.flatMap((id): TaskListItem[] => {
      const definition = definitions.get(id);
      const answered = answers.get(id);
      if (answered?.summary) return [withAreas(answered.summary, definition, query.withAreas)];
      if (answered) {
        const row = definition ?? this.tasks.storedRow(id);
        if (!row) return [];
        const unanswered = {
          node: answered.node,
          node_answered: false,
          dump: `node ${answered.node} ${answered.why}: status and health as the site last stored them`,
        };
        return [withAreas({ ...this.tasks.summarize(row), ...unanswered }, row, query.withAreas)];
      }
      // Here (assigned here, or not shared yet), or closed elsewhere or not placed: as the site has it.
      const own = this.tasks.storedRow(id);
      const row = own ?? definition;
      if (!row) return [];
      const summary = this.tasks.summarize(row);
      const node =
        summary.status === 'closed' ? null : own ? this.site.node : (this.site.ownerOf(id) ?? null);
      const site = node === this.site.node ? { node, node_answered: true } : { node };
      return [withAreas({ ...summary, ...site }, row, query.withAreas)];
    });
    return { items, total: ordered.length };
  }

  /**
   * Which of `nodes` stores the task as closed (the node that closed it: a closed task has no
   * assignment), asking them all at once; `unanswered`: those that did not answer in time.
   */
  async holderOf(
    taskId: string,
    nodes: readonly string[],
  ): Promise<{ holder?: string; unanswered: string[] }> {
    const answers = await Promise.all(
      nodes.map(async (node) => ({ node, got: await this.ask(node, [taskId]) })),
    );
    return {
      holder: answers.find(({ got }) => got?.get(taskId)?.status === 'closed')?.node,
      unanswered: answers.flatMap(({ node, got }) => (got ? [] : [node])),
    };
  }

  /** The next listing reads the definitions afresh (a task's definition was removed here). */
  invalidate(): void {
    this.read = undefined;
  }

  /** The site's definitions, read at most once per DEFINITIONS_FRESH_MS (a failed read is not kept). */
  private definitions(): Promise<TaskRow[]> {
    const now = Date.now();
    if (this.read && now - this.read.at < DEFINITIONS_FRESH_MS) return this.read.rows;
    const rows = this.site.definitions();
    this.read = { at: now, rows };
    rows.catch(() => {
      if (this.read?.rows === rows) this.read = undefined;
    });
    return rows;
  }

  /** The node's summaries of the asked tasks, by id; undefined when it does not answer in time. */
  private async ask(node: string, taskIds: string[]): Promise<Map<string, TaskSummary> | undefined> {
    try {
      const message = await this.conn.nc.request(
        `vc.node.${node}.tasks`,
        JSON.stringify({ task_ids: taskIds } satisfies Asked),
        { timeout: LISTING_TIMEOUT_MS },
      );
      return new Map(message.json<TaskSummary[]>().map((summary) => [summary.task_id, summary]));
    } catch {
      return undefined;
    }
  }
}

/** Whether a stored task passes the listing's filter (closed or not, mode). */
const matches = (row: TaskRow, query: TaskPageQuery) =>
  (query.closed === undefined || (row.status === 'closed') === query.closed) &&
  (query.mode === undefined || row.mode === query.mode);

/** The element with its areas when asked for, from its stored row (areas change only with the row). */
function withAreas(summary: TaskSummary, row: TaskRow | undefined, wanted: boolean): TaskListItem {
  return wanted && row ? { ...summary, app_configs: areasOf(row) } : summary;
}
