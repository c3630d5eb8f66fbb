import { Type } from '@sinclair/typebox';
import type { AlarmClips } from '../../clips/alarm-clips';
import type { ClusterNode } from '../../cluster/cluster-node';
import { heatmapPng } from '../../osd/heatmap';
import type { FrameSnapshots } from '../../pipeline/frame-snapshots';
import { SNAPSHOT_WIDTHS } from '../../pipeline/frame-snapshots';
import { HEAT_COLUMNS, HEAT_ROWS } from '../../pipeline/heat-grid';
import type { VideoAnalysis } from '../../pipeline/video-analysis';
import { TASK_AREA_LIMITS, TASK_PAGE_LIMIT } from '../../tasks/limits';
import type { TaskRegistry } from '../../tasks/registry';
import {
  CLOSE_CODE,
  StartTaskBody,
  TaskCounts,
  TaskListItem,
  TaskListQuery,
  TaskSummary,
  TaskView,
  UpdateTaskBody,
} from '../../tasks/schema';
import type { TaskPageQuery } from '../../tasks/task-repository';
import { whenAbandoned } from '../abandoned';
import { Envelope, ok, okArrayJson } from '../envelope';
import { ApiError } from '../errors';
import { LIVE_TASK, TASK_APPS } from '../openapi';
import type { RoutePlugin } from '../route-plugin';
import { TaskParams } from '../schemas';
import { TaskListing } from '../task-listing';

const pictureQuery = (defaultWidth: number) =>
  Type.Object(
    {
      width: Type.Optional(
        Type.Integer({
          minimum: SNAPSHOT_WIDTHS.min,
          maximum: SNAPSHOT_WIDTHS.max,
          description: `Pixels wide (never more than the source); default ${defaultWidth}`,
        }),
      ),
      refresh: Type.Optional(
        Type.Integer({
          minimum: 0,
          description: 'Ignored: a counter that gives each picture of an <img> its own address',
        }),
      ),
      token: Type.Optional(Type.String({ maxLength: 512 })),
    },
    { additionalProperties: false },
  );
const HeatGridData = Type.Object({
  task_id: Type.String(),
  columns: Type.Integer({ description: `${HEAT_COLUMNS} cells across the frame` }),
  rows: Type.Integer({ description: `${HEAT_ROWS} cells down the frame` }),
  cells: Type.Array(Type.Number({ minimum: 0 }), {
    description: 'Row by row from the top left: object-frames whose foot point fell in the cell',
  }),
});

const CloseQuery = Type.Object(
  {
    purge: Type.Optional(
      Type.Boolean({
        description:
          'Extension: true removes a closed task from the listing and storage now (409 40906 while it runs)',
      }),
    ),
    clips: Type.Optional(
      Type.Union([Type.Literal('keep'), Type.Literal('remove')], {
        description:
          "Extension: keep (default) leaves the task's clips listed and playable after it is gone; remove deletes them",
      }),
    ),
  },
  { additionalProperties: false },
);
const Closed = Type.Object({
  task_id: Type.String(),
  close_code: Type.Integer(),
  purged: Type.Optional(Type.Boolean({ description: 'Extension: true when purge=true removed the task' })),
});

/** The listing's query for the page after this one: only validated values, never the caller's text. */
function nextPage(query: TaskListQuery, offset: number): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...query, offset })) params.set(name, String(value));
  return `/api/tasks?${params}`;
}

/** A page of the whole site's listing on a node of a cluster (cluster/site-listing.ts), as JSON. */
async function siteListing(
  cluster: ClusterNode,
  filter: TaskPageQuery & { withAreas: boolean },
  serialize: (task: TaskListItem) => string,
): Promise<{ json: Buffer; count: number; total: number }> {
  const { items, total } = await cluster.listing.page(filter);
  return { json: okArrayJson(items.map((item) => Buffer.from(serialize(item)))), count: items.length, total };
}

/** A heatmap is looked at on its own, larger than a wall's tile. */
const HEATMAP_WIDTH = 640;

/** A running task gave no analysed frame in the time its rate allows: its stream is lost or stalled. */
const noFrame = (taskId: string, waitMs: number) =>
  new ApiError(
    'STREAM_UNAVAILABLE',
    `task ${taskId} gave no frame within ${Math.round(waitMs / 100) / 10} s`,
  );
/** What a start may be refused for: its package and apps, and a source that will not open. */
const START_REFUSALS = [...TASK_APPS, 'SOURCE_TOO_LARGE', 'STREAM_UNAVAILABLE'] as const;
/** A link to a running task's snapshot or heatmap opens that task's pictures alone. */
const taskPictures = (params: Record<string, string>) => ['task-pictures', params.task_id];

export const taskRoutes: RoutePlugin<{
  tasks: TaskRegistry;
  snapshots: FrameSnapshots;
  video: Pick<VideoAnalysis, 'counts' | 'heatmap'>;
  cluster?: ClusterNode;
  clips: Pick<AlarmClips, 'removeTask'>;
}> = async (app, { tasks, snapshots, video, cluster, clips }) => {
  const listing = new TaskListing(tasks);

  app.post(
    '/api/task',
    {
      bodyLimit: TASK_AREA_LIMITS.bodyBytes,
      config: { refusals: START_REFUSALS },
      schema: {
        tags: ['tasks'],
        summary: '4.4 Start a task (a video task answers once its first frame is decoded, or 503 after 15 s)',
        body: StartTaskBody,
        response: { 200: Envelope(Type.Object({ task_id: Type.String() })) },
      },
    },
    async (request, reply) => {
      // A client that goes away while the source opens (the console's Cancel) drops the start:
      // nothing of the task keeps running and nothing is stored.
      const abandoned = whenAbandoned(request, reply);
      try {
        const task = await tasks.start(request.body, null, abandoned.signal);
        return ok({ task_id: task.task_id });
      } catch (error) {
        if (abandoned.signal.aborted) return abandoned.drop('a task start', error);
        throw error;
      } finally {
        abandoned.end();
      }
    },
  );

  app.post(
    '/api/task/:task_id/start-again',
    {
      config: {
        ownerBound: true,
        refusals: ['TASK_NOT_FOUND', 'TASK_NOT_CLOSED', ...START_REFUSALS],
      },
      schema: {
        tags: ['tasks'],
        summary:
          "Extension: start a new task with a closed task's settings (apps, areas, source, callbacks, rate, priority, persistence); answers as 4.4 does",
        params: TaskParams,
        response: { 200: Envelope(Type.Object({ task_id: Type.String() })) },
      },
    },
    async (request) => {
      const task = await tasks.startAgain(request.params.task_id);
      return ok({ task_id: task.task_id });
    },
  );

  app.get(
    '/api/tasks',
    {
      schema: {
        tags: ['tasks'],
        summary:
          '4.5 List tasks (closed ones stay 24 h), oldest first, a page at a time: X-Total-Count says how many match, Link the next page',
        querystring: TaskListQuery,
        response: { 200: Envelope(Type.Array(TaskListItem)) },
      },
    },
    async (request, reply) => {
      const { limit = TASK_PAGE_LIMIT, offset = 0, state, mode, with_areas = false } = request.query;
      const closed = state === undefined ? undefined : state === 'closed';
      const filter = { limit, offset, closed, mode, withAreas: with_areas };
      const page = cluster?.inSite
        ? await siteListing(cluster, filter, reply.compileSerializationSchema(TaskListItem))
        : listing.page(filter, reply.compileSerializationSchema(TaskSummary));
      reply.header('x-total-count', String(page.total));
      const next = offset + page.count;
      if (page.count > 0 && next < page.total)
        reply.header('link', `<${nextPage(request.query, next)}>; rel="next"`);
      // Already JSON: Fastify sends a Buffer as it is; the schema documents its shape.
      return reply.type('application/json; charset=utf-8').send(page.json as never);
    },
  );

  app.get(
    '/api/task/:task_id',
    {
      config: { ownerBound: true, refusals: ['TASK_NOT_FOUND'] },
      schema: {
        tags: ['tasks'],
        summary: 'Extension: one task',
        params: TaskParams,
        response: { 200: Envelope(TaskView) },
      },
    },
    async (request) => ok(tasks.get(request.params.task_id)),
  );

  app.get(
    '/api/task/:task_id/snapshot',
    {
      config: {
        ownerBound: true,
        linkScope: taskPictures,
        answers: ['image/jpeg'],
        refusals: [...LIVE_TASK, 'STREAM_UNAVAILABLE'],
      },
      schema: {
        tags: ['tasks'],
        summary:
          "Extension: a running video task's latest analysed frame as a small JPEG (recent for the task's rate, or the next one); token in Authorization, or a link token (POST /api/auth/link) in ?token=",
        params: TaskParams,
        querystring: pictureQuery(SNAPSHOT_WIDTHS.default),
      },
    },
    async (request, reply) => {
      const taskId = request.params.task_id;
      tasks.liveTask(taskId, 'video');
      const jpeg = await snapshots.jpeg(taskId, request.query.width ?? SNAPSHOT_WIDTHS.default);
      if (!jpeg) throw noFrame(taskId, snapshots.waitMs(taskId));
      return reply.header('content-type', 'image/jpeg').header('cache-control', 'no-store').send(jpeg);
    },
  );

  app.get(
    '/api/task/:task_id/heatmap',
    {
      config: {
        ownerBound: true,
        linkScope: taskPictures,
        answers: ['image/png'],
        refusals: [...LIVE_TASK, 'STREAM_UNAVAILABLE'],
      },
      schema: {
        tags: ['tasks'],
        summary:
          "Extension: where a running video task's objects stood (foot points) as heat over its latest analysed frame, PNG; token in Authorization, or a link token (POST /api/auth/link) in ?token=",
        params: TaskParams,
        querystring: pictureQuery(HEATMAP_WIDTH),
      },
    },
    async (request, reply) => {
      const taskId = request.params.task_id;
      tasks.liveTask(taskId, 'video');
      const frame = await snapshots.frame(taskId);
      const grid = video.heatmap(taskId);
      if (!frame || !grid) throw noFrame(taskId, snapshots.waitMs(taskId));
      const png = await heatmapPng(frame, grid, request.query.width ?? HEATMAP_WIDTH);
      return reply.header('content-type', 'image/png').header('cache-control', 'no-store').send(png);
    },
  );

  app.get(
    '/api/task/:task_id/heatmap/grid',
    {
      config: { ownerBound: true, refusals: [...LIVE_TASK, 'STREAM_UNAVAILABLE'] },
      schema: {
        tags: ['tasks'],
        summary: "Extension: a running video task's heatmap as counts per cell, for drawing it elsewhere",
        params: TaskParams,
        response: { 200: Envelope(HeatGridData) },
      },
    },
    async (request) => {
      const task = tasks.liveTask(request.params.task_id, 'video');
      const grid = video.heatmap(task.task_id);
      if (!grid) throw new ApiError('STREAM_UNAVAILABLE', `task ${task.task_id} is not analysed now`);
      return ok({ task_id: task.task_id, columns: HEAT_COLUMNS, rows: HEAT_ROWS, cells: [...grid.cells] });
    },
  );

  app.delete(
    '/api/task/:task_id/heatmap',
    {
      config: { ownerBound: true, refusals: LIVE_TASK },
      schema: {
        tags: ['tasks'],
        summary: "Extension: starts a running video task's heatmap again",
        params: TaskParams,
        response: { 200: Envelope(Type.Object({ task_id: Type.String() })) },
      },
    },
    async (request) => {
      const task = tasks.liveTask(request.params.task_id, 'video');
      video.heatmap(task.task_id)?.reset();
      return ok({ task_id: task.task_id });
    },
  );

  app.get(
    '/api/task/:task_id/counts',
    {
      config: { ownerBound: true, refusals: LIVE_TASK },
      schema: {
        tags: ['tasks'],
        summary:
          "Extension: a running video task's counting-line crossings per app, class and direction since its analysis started, and the objects in each of its zones now",
        params: TaskParams,
        response: { 200: Envelope(TaskCounts) },
      },
    },
    async (request) => {
      const task = tasks.liveTask(request.params.task_id, 'video');
      const counts = video.counts(task.task_id);
      return ok({
        task_id: task.task_id,
        apps: task.app_ids.map((app_id) => ({
          app_id,
          line: counts?.get(app_id)?.line ?? null,
          zones: counts?.get(app_id)?.zones ?? null,
        })),
      });
    },
  );

  app.put(
    '/api/task/:task_id',
    {
      bodyLimit: TASK_AREA_LIMITS.bodyBytes,
      config: { ownerBound: true, refusals: ['TASK_NOT_FOUND', 'TASK_CLOSED', ...TASK_APPS] },
      schema: {
        tags: ['tasks'],
        summary: '4.7 Update a task live (app_ids, osd, and the extension app_configs)',
        params: TaskParams,
        body: UpdateTaskBody,
        response: { 200: Envelope(TaskView) },
      },
    },
    async (request) => ok(tasks.update(request.params.task_id, request.body)),
  );

  app.delete(
    '/api/task/:task_id',
    {
      config: { ownerBound: true, refusals: ['TASK_NOT_FOUND', 'TASK_NOT_CLOSED'] },
      schema: {
        tags: ['tasks'],
        summary:
          '4.6 Close a task (closing a closed task again answers the same); with purge=true, remove a closed task now',
        params: TaskParams,
        querystring: CloseQuery,
        response: { 200: Envelope(Closed) },
      },
    },
    async (request) => {
      const taskId = request.params.task_id;
      const removeClips = () => {
        if (request.query.clips === 'remove') clips.removeTask(taskId);
      };
      if (request.query.purge) {
        const task = tasks.purge(taskId);
        listing.forget(taskId);
        removeClips();
        return ok({ task_id: task.task_id, close_code: task.close_code, purged: true });
      }
      const task = tasks.close(taskId, CLOSE_CODE.byCaller);
      removeClips();
      return ok({ task_id: task.task_id, close_code: task.close_code });
    },
  );
};
