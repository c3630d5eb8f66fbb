import { Type } from '@sinclair/typebox';
import { CLOSE_CODE, StartTaskBody, TaskView, UpdateTaskBody } from '../../tasks/schema';
import type { Api } from '../app';
import type { ApiContext } from '../context';
import { Envelope, ok } from '../envelope';
import { TaskParams } from '../schemas';

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
