/**
 * Secrets that free text can carry past any structured redaction: credentials in URLs
 * (rtsp://user:pass@camera, as ffmpeg prints its input in errors, or a report_url), ?token= and
 * similar query values, bearer tokens. Every log line passes through here, whoever wrote it.
 */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"]*@/gi;
const QUERY_SECRETS = /([?&](?:token|access_token|password|secret)=)[^&\s"#]*/gi;
const BEARER = /\b(bearer\s+)[A-Za-z0-9._~+/=-]+/gi;

export const REDACTED = '[redacted]';

export function scrubSecrets(text: string): string {
  return text
    .replace(URL_CREDENTIALS, `$1${REDACTED}@`)
    .replace(QUERY_SECRETS, `$1${REDACTED}`)
    .replace(BEARER, `$1${REDACTED}`);
}

/**
 * A source or receiver URL as a log or an audit entry may show it: scheme, host, port and path; the
 * user info, query and fragment (where credentials and tokens go) left out. Paths stay as given.
 */
export function displayUrl(value: string): string {
  if (value.startsWith('/')) return value;
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return scrubSecrets(value);
  }
}
