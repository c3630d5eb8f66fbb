/**
 * Why a source did not open, as the `reason` extension of a 50301 or 42207 envelope (POST
 * /api/task, POST /api/stream) names it: a stable word the console turns into a translated message
 * and a hint on what to check. Plain constants, no Node.
 */
export const SOURCE_FAILURE_REASONS = [
  /** The host name did not resolve (DNS). */
  'unresolved',
  /** The host answered that nothing listens on that port. */
  'refused',
  /** Nothing answered within the open timeout. */
  'timeout',
  /** The server wants other credentials (401, 403). */
  'denied',
  /** The server has no stream at that path (404, RTMP "stream not found"). */
  'not_found',
  /** What came is not video the engine reads (a format it refuses, data it cannot parse). */
  'not_video',
  /** Its frames have more pixels than the engine accepts. */
  'too_large',
  /** A file outside the media folders, or no file there: one answer for both. */
  'file_refused',
  /** Anything else: no frame came, the engine log says why. */
  'no_frame',
] as const;

export type SourceFailureReason = (typeof SOURCE_FAILURE_REASONS)[number];
