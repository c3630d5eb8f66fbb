import type { DeliveryRecord, EngineEvent, HttpMethod, QueryValue } from '../../../preload/api';

export type { DeliveryRecord, EngineEvent, HttpMethod, QueryValue };

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
  /** Extension: present when the password is the first start's random one. */
  password_change_required?: boolean;
}

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  signal?: AbortSignal;
}

/** data of POST /api/zapk (E.3). */
export interface PackageInstalled {
  zapk_id: string;
  version: string;
  upgraded: boolean;
  /** Extension: what the install did (same version: reinstalled). */
  change?: 'installed' | 'upgraded' | 'reinstalled' | 'downgraded';
}

/** What the live feed carries: a stored event (its callback body), or a change of its delivery state. */
export type FeedMessage =
  | { type: 'callback'; body: EngineEvent }
  | { type: 'delivery'; record: DeliveryRecord };

export type FeedListener = (message: FeedMessage) => void;

/** Whether the live feed is connected (SSE reconnects on its own after a drop). */
export type FeedStatusListener = (connected: boolean) => void;

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
  /** Live result events (the bodies the callbacks carry) and delivery changes; returns the unsubscribe. */
  subscribe(listener: FeedListener, onStatus?: FeedStatusListener): () => void;
  /** Uploads a .zapk the operator picked or dropped (POST /api/zapk). */
  installPackage(file: File): Promise<Envelope<PackageInstalled>>;
  /**
   * An engine media URL (an hls_url) as this console loads it: in a browser on the page's own
   * origin (the engine that served it), in the desktop app as the engine gave it.
   */
  mediaUrl(url: string): string;
  /** Headers for media requests (HLS playlists and segments); main adds them in the desktop app. */
  mediaHeaders(): Record<string, string>;
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
    /** The request field at fault, as the envelope names it (e.g. app_configs[0].polygon). */
    readonly field?: string,
    /** The kind of refusal where a code has several (e.g. why a source did not open), as the envelope says. */
    readonly reason?: string,
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
    const { field, reason } = body as { field?: unknown; reason?: unknown };
    throw new ApiError(
      status,
      body.code === 0 ? NO_ENVELOPE : body.code,
      body.msg,
      typeof field === 'string' ? field : undefined,
      typeof reason === 'string' ? reason : undefined,
    );
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
