import type { preParsingAsyncHookHandler } from 'fastify';
import { DECODE_WAIT_MS, WaitingBudget } from '../images/budget';
import { imageError } from '../images/image-error';

/**
 * Bytes of image upload bodies the engine receives and holds at once, all uploads together: two of
 * the largest (a pair of 20 MiB images as base64 JSON is about 53 MiB) or many small ones. A body
 * costs up to about three times its size while it is parsed (the text, the decoded image, the
 * chunks it arrived in), so this bounds upload bodies to about 400 MB together.
 */
export const DEFAULT_UPLOAD_MEMORY_BYTES = 128 * 1024 * 1024;

/** The budget of upload body bytes; an upload waits up to 10 s for room, then gets 503 50302. */
export function uploadMemory(capacity = DEFAULT_UPLOAD_MEMORY_BYTES): WaitingBudget {
  return new WaitingBudget(capacity, DECODE_WAIT_MS, {
    // The routes' body limit is never above the capacity, so Fastify's 413 comes first.
    tooLarge: (bytes, most) =>
      imageError(
        'image.too_large',
        `body: ${bytes} bytes; at most ${most} bytes of uploads are read at once`,
      ),
    busy: (wait) =>
      imageError(
        'image.busy',
        `other uploads fill the memory for receiving images and none finished within ${wait / 1000} s; try again`,
        undefined,
        1,
      ),
  });
}

/**
 * A route's preParsing hook: before a byte of the body is read, the upload takes what it may hold
 * (its Content-Length, or the route's whole body limit when it sends none) from the shared budget,
 * and gives it back when its answer is done or its connection goes. A body over the route's limit
 * takes nothing: Fastify refuses it (413) without reading it.
 */
export function reserveUploadBody(budget: WaitingBudget): preParsingAsyncHookHandler {
  return async (request, reply, payload) => {
    const limit = request.routeOptions.bodyLimit ?? budget.capacity;
    const declared = Number(request.headers['content-length']);
    if (declared > limit) return payload;
    const bytes = Number.isSafeInteger(declared) && declared >= 0 ? declared : limit;
    const release = await budget.acquire(bytes);
    reply.raw.once('close', release);
    return payload;
  };
}
