import type { SourceFailureReason } from '../contract/source-failure';
import { DomainError } from '../domain-error';
import { SourceRefusedError, sourceFailure } from './media-folders';
import { SourceNotVideoError, SourceTooLargeError } from './source-limits';
import type { SourceField } from './source-url';

/** Why a source named by `video_url` (or `analysis_url`) did not open; engine/api/domain-errors.ts maps each to its code. */
export type SourceErrorKind = 'source.too_large' | 'source.unavailable';

/**
 * A source that failed to open (a task's or a preview's), in the domain's words: its frames are over
 * the pixel cap, or it gave no video for the reason sourceFailure may tell. What ffmpeg said stays the
 * cause, for the engine log only; the answer carries the kind of failure (`reason`) alone. `tried`
 * says what was attempted: "opened", "previewed"; `field`, which of the task's sources it was.
 */
export function sourceRefusal(
  error: unknown,
  tried: string,
  field: SourceField = sourceFieldOf(error),
): DomainError<SourceErrorKind> {
  const details = { field, reason: failureReason(error) };
  if (error instanceof SourceTooLargeError)
    return new DomainError<SourceErrorKind>('source.too_large', `${field}: ${error.message}`, details);
  return new DomainError<SourceErrorKind>(
    'source.unavailable',
    `${field}: the source could not be ${tried}: ${sourceFailure(error)}`,
    details,
    { cause: error },
  );
}

/**
 * Errors of a task's sub-stream (analysis_url), marked where it failed: the refusal names that field.
 * A mark rather than a wrapper, so that the error keeps its type (SourceTooLargeError, ...) for
 * failureReason.
 */
const analysisUrlErrors = new WeakSet<object>();

/** Marks an error as the sub-stream's (analysis_url's); returns it. */
export function ofAnalysisUrl<E>(error: E): E {
  if (typeof error === 'object' && error !== null) analysisUrlErrors.add(error);
  return error;
}

const sourceFieldOf = (error: unknown): SourceField =>
  typeof error === 'object' && error !== null && analysisUrlErrors.has(error) ? 'analysis_url' : 'video_url';

/**
 * ffmpeg's words for the failures an operator can act on, first match wins. Authentication and a
 * missing path come first: their lines also name the connection that carried them.
 */
const REASONS: ReadonlyArray<[RegExp, SourceFailureReason]> = [
  // RTSP "method DESCRIBE failed: 401 Unauthorized", HTTP "Server returned 403 Forbidden (access denied)"
  [/\b(401|403)\b|unauthori[sz]ed|forbidden/i, 'denied'],
  // RTSP "method DESCRIBE failed: 404 Not Found", HTTP "HTTP error 404 Not Found", RTMP servers' status
  [/\b404\b|not found|StreamNotFound/i, 'not_found'],
  // "[tcp @ ..] Failed to resolve hostname cam.example: Name or service not known"
  [
    /failed to resolve|could not resolve|name or service not known|temporary failure in name resolution/i,
    'unresolved',
  ],
  [/connection refused/i, 'refused'],
  // "Connection timed out", and the watchdog's own "no video frame within 15 s" with nothing from ffmpeg
  [/timed? ?out|^no video frame within [\d.]+ s$/i, 'timeout'],
  // An answer that is no stream at all: something else listens there
  [/invalid data found|could not find codec|unsupported protocol/i, 'not_video'],
];

/**
 * The kind of a source's failure for the envelope's `reason`: the console says what to check from
 * it. A stable word, never ffmpeg's text: file sources keep their one answer for "outside the media
 * folders" and "not there" (file_refused); for network sources it tells apart what a timing already
 * tells (refused at once, silent until the timeout) and what the server said of the path and the
 * credentials (docs/security.md).
 */
export function failureReason(error: unknown): SourceFailureReason {
  if (error instanceof SourceTooLargeError) return 'too_large';
  if (error instanceof SourceNotVideoError) return 'not_video';
  if (error instanceof SourceRefusedError) return 'file_refused';
  const text = error instanceof Error ? error.message : String(error);
  return REASONS.find(([pattern]) => pattern.test(text))?.[1] ?? 'no_frame';
}
