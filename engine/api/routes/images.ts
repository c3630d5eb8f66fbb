import { ImageResult } from '../../events/schema';
import { decodeImage } from '../../images/decode';
import type { Api } from '../app';
import type { ApiContext } from '../context';
import { Envelope, ok } from '../envelope';
import { IMAGE_BODY_LIMIT, RAW_IMAGE_TYPES, readImageParts } from '../image-body';
import { ImageQuery, TaskParams } from '../schemas';

/**
 * Image uploads of image tasks (4.8) and diff tasks (4.9). Checked in order: the task, the body, the
 * decoding of every image; only then is the image admitted (1 s rule, idle timer) and analysed, so a
 * refused upload changes nothing.
 */
export function imageRoutes(app: Api, ctx: ApiContext): void {
  // Raw image bodies for 4.8; size is checked per image after parsing.
  app.addContentTypeParser([...RAW_IMAGE_TYPES], { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );

  app.post(
    '/api/task/:task_id/image',
    {
      config: { accepts: ['multipart/form-data', 'application/json', ...RAW_IMAGE_TYPES] },
      bodyLimit: IMAGE_BODY_LIMIT,
      schema: {
        tags: ['tasks'],
        summary: '4.8 Upload a task image: analysed at once, answered with the fired rules',
        params: TaskParams,
        querystring: ImageQuery,
        response: { 200: Envelope(ImageResult) },
      },
    },
    async (request) => {
      const { task_id } = request.params;
      ctx.tasks.liveTask(task_id, 'image');
      const parts = await readImageParts(request, ['image']);
      const enhance = request.query.enhance === 1;
      const image = await decodeImage(parts.get('image') as Buffer, 'body.image', { enhance });
      return ok(await ctx.images.analyseImage(task_id, image, request.query));
    },
  );

  app.post(
    '/api/task/:task_id/diff_image',
    {
      config: { accepts: ['multipart/form-data', 'application/json'] },
      bodyLimit: IMAGE_BODY_LIMIT,
      schema: {
        tags: ['tasks'],
        summary: '4.9 Upload a change-detection pair (or image_b alone against the previous image_b)',
        params: TaskParams,
        querystring: ImageQuery,
        response: { 200: Envelope(ImageResult) },
      },
    },
    async (request) => {
      const { task_id } = request.params;
      ctx.tasks.liveTask(task_id, 'diff');
      const parts = await readImageParts(request, ['image_b'], ['image_a']);
      const enhance = request.query.enhance === 1;
      const before = parts.get('image_a');
      // Decoded side by side; a problem with image_a is reported before one with image_b.
      const [a, b] = await Promise.allSettled([
        before ? decodeImage(before, 'body.image_a', { enhance }) : null,
        decodeImage(parts.get('image_b') as Buffer, 'body.image_b', { enhance }),
      ]);
      if (a.status === 'rejected') throw a.reason;
      if (b.status === 'rejected') throw b.reason;
      return ok(await ctx.images.analysePair(task_id, a.value, b.value, request.query));
    },
  );
}
