import { DomainError } from '../domain-error';

/** Why an uploaded image was refused; engine/api/domain-errors.ts maps each to its envelope code. */
export type ImageErrorKind =
  | 'image.unsupported_type'
  | 'image.invalid'
  | 'image.too_large'
  | 'image.busy'
  | 'image.too_soon'
  | 'image.no_reference'
  | 'image.not_registered'
  | 'image.model_not_supported';

/**
 * An image refusal. `part` is the upload's part as messages name it ("body.image_a"); the error's
 * field is the same without the body root.
 */
export function imageError(
  kind: ImageErrorKind,
  message: string,
  part?: string,
  retryAfterS?: number,
): DomainError<ImageErrorKind> {
  return new DomainError(kind, message, {
    ...(part === undefined ? {} : { field: part.replace(/^body\./, '') }),
    ...(retryAfterS === undefined ? {} : { retryAfterS }),
  });
}
