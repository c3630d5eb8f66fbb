import { DomainError } from '../domain-error';
import { sourceFailure } from './media-folders';
import { SourceTooLargeError } from './source-limits';

/** Why a source named by `video_url` did not open; engine/api/domain-errors.ts maps each to its code. */
export type SourceErrorKind = 'source.too_large' | 'source.unavailable';

/**
 * A source that failed to open (a task's or a preview's), in the domain's words: its frames are over
 * the pixel cap, or it gave no video for the reason sourceFailure may tell. What ffmpeg said stays the
 * cause, for the engine log only. `tried` says what was attempted: "opened", "previewed".
 */
export function sourceRefusal(error: unknown, tried: string): DomainError<SourceErrorKind> {
  const field = { field: 'video_url' };
  if (error instanceof SourceTooLargeError)
    return new DomainError<SourceErrorKind>('source.too_large', `video_url: ${error.message}`, field);
  return new DomainError<SourceErrorKind>(
    'source.unavailable',
    `video_url: the source could not be ${tried}: ${sourceFailure(error)}`,
    field,
    { cause: error },
  );
}
