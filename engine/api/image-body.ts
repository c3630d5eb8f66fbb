import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors';
import type { UploadParts } from './openapi';

export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const RAW_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/bmp', 'image/webp'] as const;
/** Room for a 20 MiB image as base64 in JSON (4/3) plus the JSON around it. */
export const IMAGE_BODY_LIMIT = Math.ceil((MAX_IMAGE_BYTES * 4) / 3) * 2 + 64 * 1024;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The image parts of an upload (4.8, 4.9), in any of the three accepted forms: multipart file parts,
 * a raw image body (single-image endpoints only) or JSON with base64 strings. Checks presence, names
 * and sizes; decoding the pixels is the analysis's job.
 */
export async function readImageParts(
  request: FastifyRequest,
  { required, optional = [] }: UploadParts,
): Promise<Map<string, Buffer>> {
  const allowed = [...required, ...optional];
  const parts = new Map<string, Buffer>();
  const add = (name: string, data: Buffer) => {
    if (!allowed.includes(name))
      throw new ApiError(
        'INVALID_PARAMETER',
        `body.${name}: is not an allowed part; send ${allowed.join(', ')}`,
      );
    if (parts.has(name)) throw new ApiError('INVALID_PARAMETER', `body.${name}: is sent twice`);
    if (data.length === 0) throw new ApiError('INVALID_PARAMETER', `body.${name}: is empty`);
    if (data.length > MAX_IMAGE_BYTES)
      throw new ApiError('BODY_TOO_LARGE', `body.${name}: the image is larger than 20 MiB`);
    parts.set(name, data);
  };

  if (request.isMultipart()) {
    for await (const part of request.parts({
      limits: { fileSize: MAX_IMAGE_BYTES, files: allowed.length },
    })) {
      if (part.type !== 'file')
        throw new ApiError('INVALID_PARAMETER', `body.${part.fieldname}: must be a file part`);
      add(part.fieldname, await part.toBuffer());
    }
  } else if (Buffer.isBuffer(request.body)) {
    add(required[0] ?? 'image', request.body);
  } else if (request.body && typeof request.body === 'object' && !Array.isArray(request.body)) {
    for (const [name, value] of Object.entries(request.body as Record<string, unknown>)) {
      if (typeof value !== 'string' || !BASE64.test(value)) {
        throw new ApiError('INVALID_PARAMETER', `body.${name}: must be a base64 string`);
      }
      add(name, Buffer.from(value, 'base64'));
    }
  } else {
    throw new ApiError(
      'INVALID_PARAMETER',
      'body: must be multipart/form-data, a raw image or a JSON object',
    );
  }
  for (const name of required) {
    if (!parts.has(name)) throw new ApiError('INVALID_PARAMETER', `body.${name}: is required`);
  }
  return parts;
}
