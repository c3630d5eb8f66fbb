import { Agent, type Dispatcher, request as send } from 'undici';
import type { AttemptOutcome } from './outbox';
import { SIGNATURE_HEADER, signatureHeader } from './signature';

/** More of an answer than this is not read: only its code and msg matter. */
const ANSWER_LIMIT = 64 * 1024;
const MSG_LIMIT = 500;
/** undici's own phase timeouts: they end an attempt as our deadline does. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export interface PostRequest {
  url: string;
  json: string;
  secret: string;
  /** Signature time (ms). */
  now: number;
  timeoutMs: number;
  /** Aborted when the engine stops: the attempt is then neither a success nor a failure. */
  stop: AbortSignal;
  /** The callback connection pool (callbackAgent). */
  dispatcher: Dispatcher;
}

export interface PostOutcome extends AttemptOutcome {
  /** No answer came within the timeout: the receiver held the request (or the connection) open. */
  timed_out: boolean;
}

/**
 * The connections of callback requests, apart from every other HTTP client of the process: at most
 * `perReceiver` sockets to one origin, and connect, headers and body each bounded by the request
 * timeout (a second guard beside postCallback's own deadline).
 */
export function callbackAgent(options: { timeoutMs: number; perReceiver: number }): Agent {
  return new Agent({
    connections: options.perReceiver,
    connectTimeout: options.timeoutMs,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
}

/**
 * One callback POST (part 4.14 / 5.3): Content-Type application/json and no Authorization header;
 * X-Vision-Signature when the task has a secret. Any 2xx acknowledges; the answer's code and msg
 * are kept when it is JSON. Never throws: a refused connection or a timeout is a failed attempt,
 * and the whole attempt (connect, headers, body) ends at timeoutMs.
 */
export async function postCallback(request: PostRequest): Promise<PostOutcome> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (request.secret) headers[SIGNATURE_HEADER] = signatureHeader(request.secret, request.json, request.now);
  // The deadline is a plain timer that this function holds until the attempt ends. AbortSignal.timeout
  // is not: under AbortSignal.any its timer can be garbage-collected and never fire (Node 20), which
  // left requests to receivers that never answer hanging for good.
  const abort = new AbortController();
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, request.timeoutMs);
  const onStop = () => abort.abort();
  request.stop.addEventListener('abort', onStop);
  if (request.stop.aborted) abort.abort();
  try {
    // A redirect is not an acknowledgment (undici's request never follows one): the caller gave the
    // exact address to report to.
    const response = await send(request.url, {
      method: 'POST',
      headers,
      body: request.json,
      signal: abort.signal,
      dispatcher: request.dispatcher,
    });
    const answer = parseAnswer(await readLimited(response.body));
    const status = response.statusCode;
    const ok = status >= 200 && status < 300;
    return {
      ok,
      http_status: status,
      ...answer,
      error: ok ? null : `the receiver answered HTTP ${status}`,
      timed_out: false,
    };
  } catch (error) {
    const late = timedOut || TIMEOUT_CODES.has((error as { code?: string }).code ?? '');
    return {
      ok: false,
      http_status: null,
      answer_code: null,
      answer_msg: null,
      error: late ? `no answer within ${request.timeoutMs} ms` : describe(error),
      timed_out: late,
    };
  } finally {
    clearTimeout(deadline);
    request.stop.removeEventListener('abort', onStop);
  }
}

async function readLimited(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).byteLength;
    if (size >= ANSWER_LIMIT) {
      body.destroy();
      break;
    }
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, ANSWER_LIMIT));
}

function parseAnswer(text: string): { answer_code: number | null; answer_msg: string | null } {
  try {
    const parsed = JSON.parse(text) as { code?: unknown; msg?: unknown };
    return {
      answer_code: Number.isInteger(parsed.code) ? (parsed.code as number) : null,
      answer_msg: typeof parsed.msg === 'string' ? parsed.msg.slice(0, MSG_LIMIT) : null,
    };
  } catch {
    return { answer_code: null, answer_msg: null };
  }
}

/** The socket's error code says what happened (ECONNREFUSED, ECONNRESET...); else the message. */
function describe(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  return code ? `the request failed: ${code}` : `the request failed: ${message ?? String(error)}`;
}
