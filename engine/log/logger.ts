import pino from 'pino';
import { LOG_FILE_DEFAULTS, LogFile, type LogFileLimits } from './log-file';
import { REDACTED, scrubSecrets } from './scrub';
import { THROTTLE_DEFAULTS } from './throttle';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'silent';
export type EngineLogger = pino.Logger;

export interface LogOptions extends LogFileLimits {
  /** Every line to stdout as well (the command line's and the desktop app's engine process). */
  stdout: boolean;
  /**
   * Window of a repeating line (a stream lost and restored, an analysis error, a failed callback):
   * per task and window, the first few are written, then one line with the count (throttle.ts).
   */
  repeatWindowMs: number;
}

export const LOG_DEFAULTS: LogOptions = {
  ...LOG_FILE_DEFAULTS,
  stdout: true,
  repeatWindowMs: THROTTLE_DEFAULTS.windowMs,
};

/** A longer line (a huge error) is replaced by a note of its size and its start. */
export const MAX_LINE_CHARS = 16 * 1024;
const LINE_HEAD_CHARS = 1024;

/**
 * Field names whose values never reach a line, wherever a caller put them (one level deep: pino's
 * redaction takes explicit paths). Free text is scrubbed as well (scrub.ts).
 */
const SECRET_FIELDS = [
  'password',
  'password_hash',
  'token',
  'access_token',
  'secret',
  'report_secret',
  'authorization',
  'cookie',
];
const REDACT_PATHS = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((name) => `*.${name}`),
  'req.headers.authorization',
  'req.headers.cookie',
];

/**
 * The engine's logger: pino's JSON lines (level, ISO time, msg and the structured fields of each
 * line) into <data-dir>/logs/engine.log, rotated by size (log-file.ts), and to stdout unless told
 * not to. Secrets are redacted by field and scrubbed from free text before anything is written.
 */
export function createEngineLogger(
  dataDir: string,
  level: LogLevel,
  options: Partial<LogOptions> = {},
): { logger: EngineLogger; close(): void } {
  const { stdout, maxFileBytes, maxFiles } = { ...LOG_DEFAULTS, ...options };
  const file = new LogFile(dataDir, { maxFileBytes, maxFiles });
  const out = stdout ? pino.destination({ dest: 1, sync: true }) : undefined;
  const destination = {
    write(line: string) {
      const clean = scrubSecrets(line.length > MAX_LINE_CHARS ? shortened(line) : line);
      file.write(clean);
      out?.write(clean);
    },
  };
  const logger = pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      serializers: {
        // What Fastify's own lines say of a request: never its headers (Authorization, cookies).
        req: (request: { method?: string; url?: string; ip?: string }) => ({
          method: request.method,
          url: request.url,
          client: request.ip,
        }),
      },
    },
    destination,
  );
  return { logger, close: () => file.close() };
}

function shortened(line: string): string {
  return `${JSON.stringify({
    level: 40,
    time: new Date().toISOString(),
    msg: `a log line of ${line.length} characters was cut to its first ${LINE_HEAD_CHARS}`,
    head: line.slice(0, LINE_HEAD_CHARS),
  })}\n`;
}
