import { ImageResult } from '../../events/schema';
import type { ImageAnalysis } from '../../images/analysis';
import type { WaitingBudget } from '../../images/budget';
import { inspectImage } from '../../images/decode';
import type { TaskRegistry } from '../../tasks/registry';
import { Envelope, ok } from '../envelope';
import { IMAGE_BODY_LIMIT, RAW_IMAGE_TYPES, readImageParts } from '../image-body';
import { IMAGE_UPLOAD, type UploadParts } from '../openapi';
import type { RoutePlugin } from '../route-plugin';
import { ImageQuery, TaskParams } from '../schemas';
import { reserveUploadBody } from '../upload-memory';

/**
 * Image uploads of image tasks (4.8) and diff tasks (4.9). Checked in order: the task, the body, each
 * image's header (format, size); then, before any pixel is decoded, the 1 s rule; then the decoding;
 * only then is the image admitted (1 s rule, idle timer) and analysed, so a refused upload changes
 * nothing.
 */
const IMAGE: UploadParts = { required: ['image'] };
const PAIR: UploadParts = { required: ['image_b'], optional: ['image_a'] };

export const imageRoutes: RoutePlugin<{
  images: ImageAnalysis;
  tasks: Pick<TaskRegistry, 'liveTask'>;
  uploadMemory: WaitingBudget;
}> = async (app, { images, tasks, uploadMemory }) => {
  // What an upload may hold in memory comes from the shared budget before its body is read, and no
  // body is larger than the whole budget.
  const bodyLimit = Math.min(IMAGE_BODY_LIMIT, uploadMemory.capacity);
  const preParsing = reserveUploadBody(uploadMemory);

  // Raw image bodies for 4.8; size is checked per image after parsing.
  app.addContentTypeParser([...RAW_IMAGE_TYPES], { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );

  app.post(
    '/api/task/:task_id/image',
    {
      config: {
        ownerBound: 'http',
        accepts: ['multipart/form-data', 'application/json', ...RAW_IMAGE_TYPES],
        upload: IMAGE,
        refusals: IMAGE_UPLOAD,
      },
      bodyLimit,
      preParsing,
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
      tasks.liveTask(task_id, 'image');
      const parts = await readImageParts(request, IMAGE);
      const enhance = request.query.enhance === 1;
      const image = await inspectImage(parts.get('image') as Buffer, 'body.image');
      return ok(await images.analyseImage(task_id, image, request.query, { enhance }));
    },
  );

  app.post(
    '/api/task/:task_id/diff_image',
    {
      config: {
        ownerBound: 'http',
        accepts: ['multipart/form-data', 'application/json'],
        upload: PAIR,
        refusals: [...IMAGE_UPLOAD, 'NO_REFERENCE_IMAGE', 'IMAGES_NOT_REGISTERED'],
      },
      bodyLimit,
      preParsing,
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
      tasks.liveTask(task_id, 'diff');
      const parts = await readImageParts(request, PAIR);
      const enhance = request.query.enhance === 1;
      const before = parts.get('image_a');
      // A problem with image_a is reported before one with image_b.
      const a = before ? await inspectImage(before, 'body.image_a') : null;
      const b = await inspectImage(parts.get('image_b') as Buffer, 'body.image_b');
      return ok(await images.analysePair(task_id, a, b, request.query, { enhance }));
    },
  );
};
