/**
 * An engine refusal as the operator reads it: a translated message and a hint on what to check,
 * chosen from the envelope's code and, for sources, its `reason` extension (why the source did not
 * open). The engine's own words stay beside, for support. Pure: screens show it with RefusalNotice.
 */
import { errorCode, SOURCE_FAILURE_REASONS, type SourceFailureReason } from '../../../engine/contract';
import type { MessageKey } from '../i18n';
import { ApiError } from '../transport';

export interface Refusal {
  message: MessageKey;
  hint: MessageKey;
  /** What the engine said ("50301: video_url: …"), for the details; null when it said nothing. */
  raw: string | null;
}

/** The statuses with words of their own; any other falls to its class (4xx as 400, 5xx as 500). */
const STATUSES = [400, 401, 403, 404, 409, 413, 422, 429, 500, 503] as const;
type Status = (typeof STATUSES)[number];

const isReason = (value: unknown): value is SourceFailureReason =>
  (SOURCE_FAILURE_REASONS as readonly unknown[]).includes(value);

const SOURCE_CODES: readonly number[] = [errorCode('STREAM_UNAVAILABLE'), errorCode('SOURCE_TOO_LARGE')];

/** A source that did not open (or is too large): its reason says what to check. */
export function isSourceRefusal(error: unknown): error is ApiError {
  return error instanceof ApiError && SOURCE_CODES.includes(error.code);
}

export function refusalOf(error: unknown): Refusal {
  if (!(error instanceof ApiError)) {
    const raw = error instanceof Error ? error.message : String(error);
    return { message: 'refusal.status.500', hint: 'refusal.status.500.hint', raw };
  }
  if (error.status === 0)
    return { message: 'refusal.unreachable', hint: 'refusal.unreachable.hint', raw: error.msg };
  const raw = `${error.code}: ${error.msg}`;
  if (SOURCE_CODES.includes(error.code)) {
    // An engine from before the reason extension: too large by its code, anything else unexplained.
    const reason = isReason(error.reason)
      ? error.reason
      : error.code === errorCode('SOURCE_TOO_LARGE')
        ? 'too_large'
        : 'no_frame';
    return { message: `refusal.source.${reason}`, hint: `refusal.source.${reason}.hint`, raw };
  }
  const status: Status = (STATUSES as readonly number[]).includes(error.status)
    ? (error.status as Status)
    : error.status >= 500
      ? 500
      : 400;
  return { message: `refusal.status.${status}`, hint: `refusal.status.${status}.hint`, raw };
}
