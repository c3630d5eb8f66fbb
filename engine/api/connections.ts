import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ERRORS, type ErrorKind } from '../contract/errors';

export interface ConnectionLimits {
  /**
   * Open connections at most; at the limit, the one idle the longest is closed for a newcomer (see
   * ConnectionSlots). Well below the process's descriptor limit (1024 on many systems), which
   * ffmpeg's pipes, SQLite and package files share.
   */
  maxConnections: number;
  /** Of those, connections without a token one client (IPv4 address, IPv6 /64) may hold. */
  perClient: number;
  /** Of those, slots kept for connections that present a valid token (the console's). */
  reserved: number;
  /** Time a connection has to send a request's complete headers (slowloris, idle sockets). */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: 512,
  perClient: 64,
  reserved: 32,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
};

/** Node checks the headers timeout on an interval: often enough that a slow client is cut in time. */
export const checkIntervalMs = (limits: ConnectionLimits) =>
  Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)));

/** When a request refused for want of a connection slot may try again. */
export const CONNECTIONS_RETRY_AFTER_S = 1;

const CLIENT_ERRORS: Record<string, { kind: ErrorKind; msg: string }> = {
  HPE_HEADER_OVERFLOW: {
    kind: 'HEADERS_TOO_LARGE',
    msg: 'the request headers are larger than the 16 KiB the engine accepts',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    kind: 'REQUEST_TIMEOUT',
    msg: 'the request did not arrive in time (headers within seconds, a whole upload within 10 min)',
  },
};

/**
 * Answers what Node's HTTP parser refuses (oversized headers, broken syntax, a request too slow to
 * arrive) in the API's envelope instead of Node's bare answer, then closes the connection.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known = error.code ? CLIENT_ERRORS[error.code] : undefined;
  const { kind, msg } = known ?? {
    kind: 'MALFORMED_REQUEST' as const,
    msg: `the request is not valid HTTP (${error.code ?? error.message})`,
  };
  const { status, code } = ERRORS[kind];
  const body = JSON.stringify({ code, msg });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
