/**
 * A stream's last error as operators read it. The engine passes ffmpeg's own line (English, naming
 * hosts and codecs); the kinds an operator can act on are told apart here and translated, and the
 * line is kept beside them with any credentials in its URLs hidden.
 */
import type { MessageKey, Translate } from '../i18n';

const KINDS: Array<[RegExp, MessageKey]> = [
  [/\b(401|403)\b|unauthori[sz]ed|forbidden|authenticat/i, 'health.error.denied'],
  [/\b404\b|not found|no such file/i, 'health.error.notFound'],
  [/connection refused|econnrefused/i, 'health.error.refused'],
  [
    /no route to host|unreachable|could not resolve|failed to resolve|name or service not known/i,
    'health.error.unreachable',
  ],
  [/timed? ?out/i, 'health.error.timeout'],
  [/end of file|\beof\b|connection reset|broken pipe/i, 'health.error.ended'],
  [/invalid data|could not find codec|decod/i, 'health.error.badData'],
];

/** The translatable kind of a stream error; null when it is none of those known. */
export function streamErrorKind(error: string): MessageKey | null {
  return KINDS.find(([pattern]) => pattern.test(error))?.[1] ?? null;
}

/** ffmpeg's line with user and password taken out of every URL in it. */
export function redactCredentials(error: string): string {
  return error.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1***@');
}

/** A stream's last error in the operator's words, ffmpeg's line (credentials hidden) beside a known kind. */
export function streamErrorText(t: Translate, error: string): string {
  const kind = streamErrorKind(error);
  const line = redactCredentials(error);
  return kind ? `${t(kind)} (${line})` : line;
}
