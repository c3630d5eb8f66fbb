import type { EngineEvent, HttpMethod, QueryValue } from '../../../preload/api';

export type { EngineEvent, HttpMethod, QueryValue };

/** The engine's response envelope (service-interface.md 2.1). */
export interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

/** data of POST /api/auth/token (api-decisions.md 4.1). */
export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  signal?: AbortSignal;
}

/** How the console reaches the engine: IPC through main (desktop) or fetch (browser). */
export interface Transport {
  readonly kind: 'ipc' | 'http';
  /** Resolves to the envelope when code is 0; otherwise rejects with an ApiError. */
  request<T>(
    method: HttpMethod,
    path: string,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<Envelope<T>>;
  /** Live result events (the same bodies the callbacks carry); returns the unsubscribe. */
  subscribe(listener: (event: EngineEvent) => void): () => void;
}

/** Code used when there is no envelope at all (network failure, a body that is not an envelope). */
export const NO_ENVELOPE = -1;

/** A failed call: the engine's code/msg when it answered with an envelope, NO_ENVELOPE otherwise. */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    /** HTTP status; 0 when the engine could not be reached. */
    readonly status: number,
    readonly code: number,
    readonly msg: string,
  ) {
    super(`${code}: ${msg}`);
  }

  get unauthorized(): boolean {
    return this.status === 401;
  }
}

function isEnvelope(value: unknown): value is Envelope<unknown> {
  if (!value || typeof value !== 'object') return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate.code === 'number' && typeof candidate.msg === 'string';
}

/** Turns an HTTP status and parsed body into the envelope, or throws the ApiError it describes. */
export function toEnvelope<T>(status: number, body: unknown): Envelope<T> {
  if (!isEnvelope(body)) {
    throw new ApiError(status, NO_ENVELOPE, `unexpected response from the engine (HTTP ${status})`);
  }
  if (body.code !== 0 || status < 200 || status >= 300) {
    throw new ApiError(status, body.code === 0 ? NO_ENVELOPE : body.code, body.msg);
  }
  return body as Envelope<T>;
}

/**
 * Builds an API path with every interpolated value percent-encoded:
 * apiPath`/api/task/${id}` never lets an id add segments or a query.
 */
export function apiPath(strings: TemplateStringsArray, ...values: Array<string | number>): string {
  return strings.reduce((path, part, index) => {
    const value = index < values.length ? encodeURIComponent(String(values[index])) : '';
    return path + part + value;
  }, '');
}
