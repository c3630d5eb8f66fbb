import { basename, dirname } from 'node:path';
import send from '@fastify/send';
import { Type } from '@sinclair/typebox';
import { type AlarmClips, clipLinkScope } from '../../clips/alarm-clips';
import {
  Clip,
  ClipFileQuery,
  ClipListQuery,
  ClipPage,
  ClipSettings,
  ClipSettingsBody,
  SaveClipBody,
} from '../../clips/clip-schema';
import type { TaskRegistry } from '../../tasks/registry';
import { Envelope, ok } from '../envelope';
import { ApiError } from '../errors';
import { LIVE_TASK } from '../openapi';
import type { RoutePlugin } from '../route-plugin';
import { PathId, TaskParams } from '../schemas';

const ClipParams = Type.Object({ clip_id: PathId });
/** A link to a clip opens that clip alone. */
const clipLink = (params: Record<string, string>) => clipLinkScope(params.clip_id ?? '');
/** Seconds a saved clip covers when the body names none. */
const DEFAULT_SAVE_S = 10;

/** A download's file name: the camera's name and the clip's start, in characters every file system takes. */
function downloadName(camera: string, start: number | null): string {
  const safe = camera.replace(/[^\w.-]+/g, '_').slice(0, 64) || 'clip';
  const at = new Date(start ?? 0).toISOString().replace(/[:.]/g, '-');
  return `${safe}-${at}.mp4`;
}

/** The camera's name; 'clip' once its task is gone (kept clips outlive it). */
function cameraName(tasks: TaskRegistry, taskId: string): string {
  try {
    return tasks.get(taskId).name;
  } catch {
    return 'clip';
  }
}

/** Alarm clips (extension, issue 35): the files with Range, their state, the list, settings. */
export const clipRoutes: RoutePlugin<{ clips: AlarmClips; tasks: TaskRegistry }> = async (
  app,
  { clips, tasks },
) => {
  app.get(
    '/api/clips',
    {
      schema: {
        tags: ['clips'],
        summary: 'Extension: clips, newest first, by task and saved or not, paged',
        querystring: ClipListQuery,
        response: { 200: Envelope(ClipPage) },
      },
    },
    async (request) => ok(clips.list(request.query)),
  );

  app.get(
    '/api/clips/:clip_id',
    {
      config: {
        linkScope: clipLink,
        answers: ['video/mp4'],
        refusals: ['CLIP_NOT_FOUND', 'CLIP_NOT_READY', 'RANGE_NOT_SATISFIABLE'],
      },
      schema: {
        tags: ['clips'],
        summary:
          "Extension: a ready clip as a fast-start MP4 with Range support (206; 416 past its end); token in Authorization, or the clip's link token (its url, or POST /api/auth/link) in ?token=; download=1 names it as an attachment",
        params: ClipParams,
        querystring: ClipFileQuery,
      },
    },
    async (request, reply) => {
      const { file, row } = clips.file(request.params.clip_id);
      // The file's own name as the path under its folder: send() reads nothing outside it.
      const sent = await send(request.raw, `/${basename(file)}`, {
        root: dirname(file),
        acceptRanges: true,
        cacheControl: false,
        etag: true,
        lastModified: true,
      });
      if (sent.type === 'error') {
        if (sent.statusCode === 416)
          throw new ApiError('RANGE_NOT_SATISFIABLE', 'the Range is past the end of the clip', {
            'content-range': sent.headers['Content-Range'] ?? '',
          });
        // Removed (quota, retention, DELETE) since its row was read.
        throw new ApiError('CLIP_NOT_FOUND', `no clip ${row.clip_id}`);
      }
      reply.code(sent.statusCode).headers(sent.headers);
      reply.header('content-type', 'video/mp4').header('cache-control', 'private, max-age=3600');
      if (request.query.download === '1') {
        const camera = cameraName(tasks, row.task_id);
        reply.header('content-disposition', `attachment; filename="${downloadName(camera, row.start_at)}"`);
      }
      return reply.send(sent.stream);
    },
  );

  app.get(
    '/api/clips/:clip_id/info',
    {
      config: { refusals: ['CLIP_NOT_FOUND'] },
      schema: {
        tags: ['clips'],
        summary: "Extension: a clip's state, span and size, and a url with a link token when it is ready",
        params: ClipParams,
        response: { 200: Envelope(Clip) },
      },
    },
    async (request) => ok(clips.info(request.params.clip_id)),
  );

  app.delete(
    '/api/clips/:clip_id',
    {
      config: { refusals: ['CLIP_NOT_FOUND'] },
      schema: {
        tags: ['clips'],
        summary: 'Extension: removes one clip, its file and its row',
        params: ClipParams,
        response: { 200: Envelope(Type.Object({ clip_id: Type.String() })) },
      },
    },
    async (request) => {
      clips.remove(request.params.clip_id);
      return ok({ clip_id: request.params.clip_id });
    },
  );

  app.post(
    '/api/task/:task_id/clip',
    {
      config: { ownerBound: true, refusals: LIVE_TASK },
      schema: {
        tags: ['clips'],
        summary:
          "Extension: saves a running video task's last seconds (1 to 30, default 10) as a clip: pending, ready within about a second",
        params: TaskParams,
        body: SaveClipBody,
        response: { 200: Envelope(Clip) },
      },
    },
    async (request) => {
      const task = tasks.liveTask(request.params.task_id, 'video');
      return ok(clips.save(task.task_id, request.body.seconds ?? DEFAULT_SAVE_S));
    },
  );

  app.get(
    '/api/settings/clips',
    {
      schema: {
        tags: ['settings'],
        summary: "Extension: alarm clips' settings: on or off, pre- and post-roll, quota, retention",
        response: { 200: Envelope(ClipSettings) },
      },
    },
    async () => ok(clips.settings),
  );

  app.put(
    '/api/settings/clips',
    {
      schema: {
        tags: ['settings'],
        summary:
          "Extension: changes alarm clips' settings (omitted fields are kept; checked as a whole: max_post_s at least post_s); the next alarm uses them",
        body: ClipSettingsBody,
        response: { 200: Envelope(ClipSettings) },
      },
    },
    async (request) => ok(clips.configure(request.body)),
  );
};
