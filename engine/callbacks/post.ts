import type { AttemptOutcome } from './outbox';
import { SIGNATURE_HEADER, signatureHeader } from './signature';

/** More of an answer than this is not read: only its code and msg matter. */
const ANSWER_LIMIT = 64 * 1024;
const MSG_LIMIT = 500;

export interface PostRequest {
  url: string;
  json: string;
  secret: string;
  /** Signature time (ms). */
  now: number;
  timeoutMs: number;
  /** Aborted when the engine stops: the attempt is then neither a success nor a failure. */
  stop: AbortSignal;
}

/**
 * One callback POST (part 4.14 / 5.3): Content-Type application/json and no Authorization header;
 * X-Vision-Signature when the task has a secret. Any 2xx acknowledges; the answer's code and msg
 * are kept when it is JSON. Never throws: a refused connection or a timeout is a failed attempt.
 */
export async function postCallback(request: PostRequest): Promise<AttemptOutcome> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (request.secret) headers[SIGNATURE_HEADER] = signatureHeader(request.secret, request.json, request.now);
  const signal = AbortSignal.any([AbortSignal.timeout(request.timeoutMs), request.stop]);
  try {
    // A redirect is not an acknowledgment: the caller gave the exact address to report to.
    const response = await fetch(request.url, {
      method: 'POST',
      headers,
      body: request.json,
      signal,
      redirect: 'manual',
    });
    const answer = parseAnswer(await readLimited(response));
    const ok = response.status >= 200 && response.status < 300;
    return {
      ok,
      http_status: response.status,
      ...answer,
      error: ok ? null : `the receiver answered HTTP ${response.status}`,
    };
  } catch (error) {
    const timedOut = signal.aborted && !request.stop.aborted;
    return {
      ok: false,
      http_status: null,
      answer_code: null,
      answer_msg: null,
      error: timedOut ? `no answer within ${request.timeoutMs} ms` : describe(error),
    };
  }
}

async function readLimited(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size >= ANSWER_LIMIT) {
      await reader.cancel();
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

/** fetch hides the socket error under "fetch failed"; its cause says what happened (ECONNREFUSED...). */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message;
  return detail ? `${(error as Error).message}: ${detail}` : String((error as Error).message ?? error);
}
