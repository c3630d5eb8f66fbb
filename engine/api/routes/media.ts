import { parseSourceUrl } from '../../media/source-url';
import type { TaskView } from '../../tasks/schema';
import type { Api } from '../app';
import type { ApiContext } from '../context';
import { ApiError } from '../errors';
import {
  AiLiveBody,
  LiveStreamParams,
  OptimizationBody,
  OptimizationParams,
  StreamBody,
  StreamParams,
  TaskParams,
} from '../schemas';

/**
 * Endpoints whose analysis arrives with later work (AI video, raw preview, optimization). They already validate everything and check auth, then say plainly that this build
 * cannot do the analysis: never a fake success.
 */
const notYet = (what: string): never => {
  throw new ApiError('NOT_IMPLEMENTED', `${what} is not available in this build of the engine`);
};

function checkAppsOfTask(task: TaskView, appIds: readonly string[]): void {
  appIds.forEach((appId, i) => {
    if (!task.app_ids.includes(appId)) {
      throw new ApiError(
        'INVALID_PARAMETER',
        `body.app_ids[${i}]: "${appId}" is not an application of task ${task.task_id}`,
      );
    }
  });
}

export function mediaRoutes(app: Api, ctx: ApiContext): void {
  app.post(
    '/api/task/:task_id/ailive',
    {
      schema: {
        tags: ['streaming'],
        summary: '4.10 Get the AI video of applications',
        params: TaskParams,
        body: AiLiveBody,
      },
    },
    async (request) => {
      const task = ctx.tasks.liveTask(request.params.task_id, 'video');
      checkAppsOfTask(task, request.body.app_ids);
      const rtmp = request.body.rtmp ?? '';
      if (rtmp !== '' && !/^rtmps?:\/\/[^/\s]+/.test(rtmp)) {
        throw new ApiError('INVALID_PARAMETER', 'body.rtmp: must be an rtmp:// or rtmps:// URL');
      }
      return notYet('AI video');
    },
  );

  app.delete(
    '/api/task/:task_id/livestream/:stream',
    { schema: { tags: ['streaming'], summary: '4.11 Close an AI video', params: LiveStreamParams } },
    async (request) => {
      ctx.tasks.get(request.params.task_id);
      throw new ApiError(
        'STREAM_NOT_FOUND',
        `task ${request.params.task_id} has no AI video "${request.params.stream}"`,
      );
    },
  );

  app.post(
    '/api/stream',
    {
      schema: { tags: ['streaming'], summary: '4.12 Get a raw preview stream of a source', body: StreamBody },
    },
    async (request) => {
      const parsed = parseSourceUrl(request.body.video_url);
      if ('error' in parsed) throw new ApiError('INVALID_PARAMETER', `body.${parsed.error}`);
      return notYet('stream preview');
    },
  );

  app.delete(
    '/api/stream/:stream_id',
    { schema: { tags: ['streaming'], summary: '4.12 Release a preview stream', params: StreamParams } },
    async (request) => {
      throw new ApiError('STREAM_NOT_FOUND', `no video stream "${request.params.stream_id}"`);
    },
  );

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
