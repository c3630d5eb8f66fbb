import type { WebSocket } from '@fastify/websocket';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts } from '../../auth/accounts';
import type { StreamTokens } from '../../auth/stream-tokens';
import type { HoldEnd } from '../../auth/token-holds';
import { DomainError } from '../../domain-error';
import type { Fmp4Channel } from '../../live/fmp4-channel';
import { type HlsFile, isSegmentName } from '../../live/hls-files';
import type { PreviewStreams } from '../../live/preview';
import type { OpenedViewer } from '../../live/task-live';
import { sourceRefusal } from '../../media/source-refusal';
import { parseSourceUrl } from '../../media/source-url';
import type { VideoAnalysis } from '../../pipeline/video-analysis';
import type { TaskRegistry } from '../../tasks/registry';
import type { TaskView } from '../../tasks/schema';
import { whenAbandoned } from '../abandoned';
import { holdToken } from '../authenticate';
import { Envelope, ok } from '../envelope';
import { ApiError } from '../errors';
import { LIVE_TASK } from '../openapi';
import type { RoutePlugin } from '../route-plugin';
import {
  AiLiveBody,
  AiLiveData,
  HlsQuery,
  LiveFileParams,
  LiveStreamParams,
  StreamBody,
  StreamData,
  StreamFileParams,
  StreamParams,
  TaskParams,
} from '../schemas';

/** kbit/s of an AI video when the request names no bitrate. */
const DEFAULT_BITRATE_KBPS = 2000;
/** An HLS stream's playlist and segments. */
const HLS = ['application/vnd.apple.mpegurl', 'video/mp2t'];

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

/** scheme://host:port as the client reached the engine: the HLS URLs it gets must work for it. */
const origin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/** The scope of a segment token: one stream (see StreamTokens), encoded without ambiguity. */
const aiVideoScope = (taskId: string, stream: string) => JSON.stringify(['ailive', taskId, stream]);
const previewScope = (streamId: string) => JSON.stringify(['preview', streamId]);

/** What authenticate asks an HLS file route: the stream whose segment the params name, if any. */
type FileParams = Record<'file' | 'task_id' | 'stream' | 'stream_id', string | undefined>;
const aiVideoSegment = (params: unknown) => {
  const { file, task_id, stream } = params as FileParams;
  return isSegmentName(file) ? aiVideoScope(String(task_id), String(stream)) : undefined;
};
const previewSegment = (params: unknown) => {
  const { file, stream_id } = params as FileParams;
  return isSegmentName(file) ? previewScope(String(stream_id)) : undefined;
};

/** Sends an HLS playlist or segment; never cached, since the playlist changes every second. */
function sendHls(reply: FastifyReply, file: HlsFile | null, what: string): FastifyReply {
  if (!file) throw new ApiError('STREAM_NOT_FOUND', what);
  return reply.type(file.type).header('cache-control', 'no-cache').send(file.body);
}

export const mediaRoutes: RoutePlugin<{
  accounts: Pick<Accounts, 'hold'>;
  previews: PreviewStreams;
  streamTokens: StreamTokens;
  tasks: Pick<TaskRegistry, 'get' | 'liveTask'>;
  video: Pick<VideoAnalysis, 'live'>;
}> = async (app, { accounts, previews, streamTokens, tasks, video }) => {
  app.post(
    '/api/task/:task_id/ailive',
    {
      config: { ownerBound: 'http', refusals: [...LIVE_TASK, 'STREAM_UNAVAILABLE', 'VIDEO_LIMIT'] },
      schema: {
        tags: ['streaming'],
        summary: '4.10 Get the AI video of applications (HLS from the engine, optional RTMP push)',
        params: TaskParams,
        body: AiLiveBody,
        response: { 200: Envelope(AiLiveData) },
      },
    },
    async (request) => {
      const taskId = request.params.task_id;
      const task = tasks.liveTask(taskId, 'video');
      checkAppsOfTask(task, request.body.app_ids);
      const rtmp = request.body.rtmp ?? '';
      if (rtmp !== '' && !/^rtmps?:\/\/[^/\s]+/.test(rtmp)) {
        throw new ApiError('INVALID_PARAMETER', 'body.rtmp: must be an rtmp:// or rtmps:// URL');
      }
      const live = video.live(taskId);
      if (!live) {
        throw new ApiError(
          'STREAM_UNAVAILABLE',
          `task ${taskId} has no open source right now (status ${task.status}); try again once it runs`,
        );
      }
      let viewer: OpenedViewer;
      try {
        viewer = await live.open({
          appIds: request.body.app_ids,
          bitrateKbps: request.body.bitrate ?? DEFAULT_BITRATE_KBPS,
          rtmp,
          width: request.body.width,
        });
      } catch (error) {
        // A limit reached (503 50304 with Retry-After) is the caller's to handle, not an engine fault.
        if (error instanceof DomainError) throw error;
        request.log.error({ err: error }, `the AI video of task ${taskId} did not start`);
        throw new ApiError('INTERNAL', `the AI video did not start: ${(error as Error).message}`);
      }
      return ok({
        stream: viewer.id,
        hls_url: `${origin(request)}/api/task/${taskId}/livestream/${viewer.id}/index.m3u8`,
        rtmp,
        bitrate: viewer.bitrateKbps,
        width: viewer.width,
        height: viewer.height,
      });
    },
  );

  app.delete(
    '/api/task/:task_id/livestream/:stream',
    {
      config: { ownerBound: true, refusals: ['TASK_NOT_FOUND', 'STREAM_NOT_FOUND'] },
      schema: {
        tags: ['streaming'],
        summary: '4.11 Close an AI video (its encoder stops with its last viewer)',
        params: LiveStreamParams,
        response: { 200: Envelope(LiveStreamParams) },
      },
    },
    async (request) => {
      const { task_id: taskId, stream } = request.params;
      tasks.get(taskId);
      if (!(await video.live(taskId)?.close(stream))) {
        throw new ApiError('STREAM_NOT_FOUND', `task ${taskId} has no AI video "${stream}"`);
      }
      return ok({ task_id: taskId, stream });
    },
  );

  app.get(
    '/api/task/:task_id/livestream/:stream/:file',
    {
      config: {
        ownerBound: 'http',
        queryToken: true,
        segmentScope: aiVideoSegment,
        answers: HLS,
        refusals: ['STREAM_NOT_FOUND'],
      },
      schema: {
        tags: ['streaming'],
        summary:
          "Extension: the AI video's HLS playlist (index.m3u8) and segments; token in Authorization or ?token=",
        params: LiveFileParams,
        querystring: HlsQuery,
      },
    },
    async (request, reply) => {
      const { task_id: taskId, stream, file } = request.params;
      // The playlist of a ?token= request lists its segments with a token for this stream only.
      const segmentToken = request.query.token ? streamTokens.issue(aiVideoScope(taskId, stream)) : undefined;
      const found = await video.live(taskId)?.file(stream, file, segmentToken);
      return sendHls(reply, found ?? null, `task ${taskId} has no AI video "${stream}" with a file ${file}`);
    },
  );

  app.route({
    method: 'GET',
    url: '/api/task/:task_id/livestream/:stream/socket',
    config: { ownerBound: 'http', queryToken: true, refusals: ['ROUTE_NOT_FOUND'] },
    schema: {
      tags: ['streaming'],
      summary:
        'Extension: the AI video as fragmented MP4 over a WebSocket (init segment, then a fragment per frame from a keyframe); token in ?token=',
      params: LiveStreamParams,
      querystring: HlsQuery,
    },
    wsHandler: async (socket, request) => {
      const { task_id: taskId, stream } = request.params as { task_id: string; stream: string };
      const found = await video.live(taskId)?.channel(stream);
      serveChannel(accounts, request, socket, found ?? null, `task ${taskId} has no AI video "${stream}"`);
    },
    handler: notUpgraded,
  });

  app.post(
    '/api/stream',
    {
      config: { refusals: ['SOURCE_TOO_LARGE', 'STREAM_UNAVAILABLE', 'VIDEO_LIMIT'] },
      schema: {
        tags: ['streaming'],
        summary: '4.12 Get a raw preview stream (HLS) of a source, with its frame size',
        body: StreamBody,
        response: { 200: Envelope(StreamData) },
      },
    },
    async (request, reply) => {
      const parsed = parseSourceUrl(request.body.video_url);
      if ('error' in parsed) throw new ApiError('INVALID_PARAMETER', `body.${parsed.error}`);
      // A client that goes away (the console's Cancel) drops the probe: its ffmpegs are killed at once.
      const abandoned = whenAbandoned(request, reply);
      let preview: Awaited<ReturnType<PreviewStreams['open']>>;
      try {
        preview = await previews.open(parsed, abandoned.signal);
      } catch (error) {
        if (abandoned.signal.aborted) return abandoned.drop('a preview', error);
        throw error instanceof DomainError ? error : sourceRefusal(error, 'previewed');
      } finally {
        abandoned.end();
      }
      return ok({
        stream_id: preview.id,
        hls_url: `${origin(request)}/api/stream/${preview.id}/index.m3u8`,
        width: preview.width,
        height: preview.height,
      });
    },
  );

  app.delete(
    '/api/stream/:stream_id',
    {
      config: { refusals: ['STREAM_NOT_FOUND'] },
      schema: {
        tags: ['streaming'],
        summary: '4.12 Release a preview stream',
        params: StreamParams,
        response: { 200: Envelope(StreamParams) },
      },
    },
    async (request) => {
      const id = request.params.stream_id;
      if (!(await previews.close(id))) throw new ApiError('STREAM_NOT_FOUND', `no video stream "${id}"`);
      return ok({ stream_id: id });
    },
  );

  app.route({
    method: 'GET',
    url: '/api/stream/:stream_id/socket',
    config: { queryToken: true, refusals: ['ROUTE_NOT_FOUND'] },
    schema: {
      tags: ['streaming'],
      summary:
        'Extension: a preview as fragmented MP4 over a WebSocket (init segment, then a fragment per frame from a keyframe); token in ?token=',
      params: StreamParams,
      querystring: HlsQuery,
    },
    wsHandler: async (socket, request) => {
      const { stream_id: id } = request.params as { stream_id: string };
      serveChannel(accounts, request, socket, previews.channel(id), `no video stream "${id}"`);
    },
    handler: notUpgraded,
  });

  app.get(
    '/api/stream/:stream_id/:file',
    {
      config: {
        queryToken: true,
        segmentScope: previewSegment,
        answers: HLS,
        refusals: ['STREAM_NOT_FOUND'],
      },
      schema: {
        tags: ['streaming'],
        summary:
          "Extension: a preview's HLS playlist (index.m3u8) and segments; token in Authorization or ?token=",
        params: StreamFileParams,
        querystring: HlsQuery,
      },
    },
    async (request, reply) => {
      const { stream_id: id, file } = request.params;
      const segmentToken = request.query.token ? streamTokens.issue(previewScope(id)) : undefined;
      return sendHls(
        reply,
        await previews.file(id, file, segmentToken),
        `no video stream "${id}" with a file ${file}`,
      );
    },
  );
};

/** A socket route asked without the WebSocket upgrade: answered in the envelope, as any unknown endpoint. */
async function notUpgraded(request: FastifyRequest): Promise<never> {
  throw new ApiError(
    'ROUTE_NOT_FOUND',
    `no endpoint ${request.method} ${request.url.split('?')[0]} without a WebSocket upgrade (Upgrade: websocket)`,
  );
}

/** The close code of a socket whose token was revoked or expired (401 of the upgrade's token). */
const TOKEN_ENDED = 4401;
const tokenEndedReason = (why: HoldEnd) =>
  why === 'expired' ? 'the token expired; get a new one' : 'the token was revoked; sign in again';

/**
 * A low-latency viewer on a stream's channel until its socket closes, or its token ends. A WebSocket
 * has no status line once open: refusals are close codes with the reason (4404 no such stream, 4429
 * too many viewers, 4401 the token was revoked or expired).
 */
function serveChannel(
  accounts: Pick<Accounts, 'hold'>,
  request: FastifyRequest,
  socket: WebSocket,
  found: { channel: Fmp4Channel; keepAlive: () => void } | null,
  missing: string,
): void {
  if (!found) {
    socket.close(4404, missing);
    return;
  }
  const leave = found.channel.join({
    send: (data) => {
      found.keepAlive();
      socket.send(data);
    },
    get bufferedAmount() {
      return socket.bufferedAmount;
    },
  });
  if (!leave) {
    socket.close(4429, 'too many viewers of this video');
    return;
  }
  // Not a frame more once the token ends; the close handshake may take the client a moment.
  const end = (why: HoldEnd) => {
    leave();
    socket.close(TOKEN_ENDED, tokenEndedReason(why));
  };
  const release = holdToken(accounts, request, end);
  if (!release) {
    end('revoked');
    return;
  }
  socket.on('close', () => {
    leave();
    release();
  });
}
