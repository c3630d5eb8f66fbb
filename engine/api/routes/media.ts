import { parseSourceUrl } from '../../media/source-url';
import type { TaskView } from '../../tasks/schema';
import type { Api } from '../app';
import type { ApiContext } from '../context';
import { ApiError } from '../errors';
import { AiLiveBody, LiveStreamParams, StreamBody, StreamParams, TaskParams } from '../schemas';

/**
 * Endpoints whose analysis arrives with later work (AI video, raw preview). They already validate everything and check auth, then say plainly that this build
 * cannot do the analysis: never a fake success.
 */
export const notYet = (what: string): never => {
  throw new ApiError('NOT_IMPLEMENTED', `${what} is not available in this build of the engine`);
};

export function checkAppsOfTask(task: TaskView, appIds: readonly string[]): void {
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
}
