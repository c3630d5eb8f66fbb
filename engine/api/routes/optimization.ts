import type { Api } from '../app';
import type { ApiContext } from '../context';
import { ApiError } from '../errors';
import { OptimizationBody, OptimizationParams, TaskParams } from '../schemas';
import { checkAppsOfTask, notYet } from './media';

export function optimizationRoutes(app: Api, ctx: ApiContext): void {
  app.post(
    '/api/task/:task_id/optimization',
    {
      schema: {
        tags: ['optimization'],
        summary: '4.13 Apply for effect optimization',
        params: TaskParams,
        body: OptimizationBody,
      },
    },
    async (request) => {
      const task = ctx.tasks.liveTask(request.params.task_id, 'video');
      checkAppsOfTask(task, request.body.app_ids);
      return notYet('effect optimization');
    },
  );

  const optimizationLookup = async (request: { params: { task_id: string; optimization_id: string } }) => {
    ctx.tasks.get(request.params.task_id);
    throw new ApiError(
      'OPTIMIZATION_NOT_FOUND',
      `task ${request.params.task_id} has no optimization "${request.params.optimization_id}"`,
    );
  };
  const optimizationSchema = { tags: ['optimization'], params: OptimizationParams };
  app.get(
    '/api/task/:task_id/optimization/:optimization_id',
    { schema: { ...optimizationSchema, summary: '4.13 Optimization status and proposed thresholds' } },
    optimizationLookup,
  );
  app.get(
    '/api/task/:task_id/optimization/:optimization_id/export',
    { schema: { ...optimizationSchema, summary: '4.13 Download the collected dataset (zip)' } },
    optimizationLookup,
  );
}
