import { Type } from '@sinclair/typebox';
import { SNAPSHOT_WIDTHS } from '../../pipeline/frame-snapshots';
import { CLOSE_CODE, StartTaskBody, TaskCounts, TaskView, UpdateTaskBody } from '../../tasks/schema';
import type { Api } from '../app';
import type { ApiContext } from '../context';
import { Envelope, ok } from '../envelope';
import { ApiError } from '../errors';
import { TaskParams } from '../schemas';

const SnapshotQuery = Type.Object(
  {
    width: Type.Optional(
      Type.Integer({
        minimum: SNAPSHOT_WIDTHS.min,
        maximum: SNAPSHOT_WIDTHS.max,
        description: `Pixels wide (never more than the source); default ${SNAPSHOT_WIDTHS.default}`,
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

export function taskRoutes(app: Api, ctx: ApiContext): void {
  app.post(
    '/api/task',
    {
      schema: {
        tags: ['tasks'],
        summary: '4.4 Start a task (a video task answers once its first frame is decoded, or 503 after 15 s)',
        body: StartTaskBody,
        response: { 200: Envelope(Type.Object({ task_id: Type.String() })) },
      },
    },
    async (request) => {
      const task = await ctx.tasks.start(request.body);
      return ok({ task_id: task.task_id });
    },
  );

  app.get(
    '/api/tasks',
    {
      schema: {
        tags: ['tasks'],
        summary: '4.5 List tasks (closed ones stay 24 h)',
        response: { 200: Envelope(Type.Array(TaskView)) },
      },
    },
    async () => ok(ctx.tasks.list()),
  );

  app.get(
    '/api/task/:task_id',
    {
      schema: {
        tags: ['tasks'],
        summary: 'Extension: one task',
        params: TaskParams,
        response: { 200: Envelope(TaskView) },
      },
    },
    async (request) => ok(ctx.tasks.get(request.params.task_id)),
  );

  app.get(
    '/api/task/:task_id/snapshot',
    {
      config: { queryToken: true },
      schema: {
        tags: ['tasks'],
        summary:
          "Extension: a running video task's next analysed frame as a small JPEG; token in Authorization or ?token=",
        params: TaskParams,
        querystring: SnapshotQuery,
      },
    },
    async (request, reply) => {
      const taskId = request.params.task_id;
      ctx.tasks.liveTask(taskId, 'video');
      const jpeg = await ctx.snapshots.jpeg(taskId, request.query.width ?? SNAPSHOT_WIDTHS.default);
      if (!jpeg) throw new ApiError('STREAM_UNAVAILABLE', `task ${taskId} gave no frame within 5 s`);
      return reply.header('content-type', 'image/jpeg').header('cache-control', 'no-store').send(jpeg);
    },
  );

  app.get(
    '/api/task/:task_id/counts',
    {
      schema: {
        tags: ['tasks'],
        summary:
          "Extension: a running video task's counting-line crossings per app, class and direction since its analysis started",
        params: TaskParams,
        response: { 200: Envelope(TaskCounts) },
      },
    },
    async (request) => {
      const task = ctx.tasks.liveTask(request.params.task_id, 'video');
      const counts = ctx.video.lineCounts(task.task_id);
      return ok({
        task_id: task.task_id,
        apps: task.app_ids.map((app_id) => ({ app_id, line: counts?.get(app_id) ?? null })),
      });
    },
  );

  app.put(
    '/api/task/:task_id',
    {
      schema: {
        tags: ['tasks'],
        summary: '4.7 Update a task live (app_ids, osd, and the extension app_configs)',
        params: TaskParams,
        body: UpdateTaskBody,
        response: { 200: Envelope(TaskView) },
      },
    },
    async (request) => ok(ctx.tasks.update(request.params.task_id, request.body)),
  );

  app.delete(
    '/api/task/:task_id',
    {
      schema: {
        tags: ['tasks'],
        summary: '4.6 Close a task (closing a closed task again answers the same)',
        params: TaskParams,
        response: { 200: Envelope(Type.Object({ task_id: Type.String(), close_code: Type.Integer() })) },
      },
    },
    async (request) => {
      const task = ctx.tasks.close(request.params.task_id, CLOSE_CODE.byCaller);
      return ok({ task_id: task.task_id, close_code: task.close_code });
    },
  );
}
