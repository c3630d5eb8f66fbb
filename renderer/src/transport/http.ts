/**
 * Browser transport: fetch against the engine that served the page, with the Bearer token from the
 * sign-in form. Used when the console runs as a web page (no window.visionConsole).
 */
import {
  ApiError,
  type DeliveryRecord,
  type EngineEvent,
  type Envelope,
  type HttpMethod,
  type IssuedToken,
  NO_ENVELOPE,
  type PackageInstalled,
  type RequestOptions,
  type Transport,
  toEnvelope,
} from './types';

export interface HttpTransportOptions {
  /** Origin of the engine; defaults to the page's own origin. */
  baseUrl?: string;
  getToken: () => string | null;
  /** Called on any 401, e.g. to drop the session and show the sign-in form again. */
  onUnauthorized?: (error: ApiError) => void;
  fetch?: typeof fetch;
  /** The EventSource class for the live feed; the browser's by default. */
  EventSource?: typeof EventSource;
}

/** A feed the engine refused (it serves as many as it may: Retry-After 5 s) is opened again after this. */
const FEED_REOPEN_MS = 5_000;

function resolveBase(baseUrl: string | undefined): string {
  const base = baseUrl ?? globalThis.location?.origin;
  if (!base) throw new Error('http transport: no base URL');
  return base;
}

async function send(
  fetchImpl: typeof fetch,
  url: URL,
  init: RequestInit,
): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetchImpl(url, init);
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ApiError(0, NO_ENVELOPE, `the engine cannot be reached (${reason})`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body };
}

/** Parses a feed message; a malformed one is dropped rather than breaking the feed. */
function parseData<T>(message: MessageEvent<string>): T | null {
  try {
    return JSON.parse(message.data) as T;
  } catch {
    return null;
  }
}

export function createHttpTransport(options: HttpTransportOptions): Transport {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const authHeaders = (): Record<string, string> => {
    const token = options.getToken();
    return token ? { authorization: `Bearer ${token}` } : {};
  };
  const toEnvelopeOrSignOut = <T>(status: number, body: unknown): Envelope<T> => {
    try {
      return toEnvelope<T>(status, body);
    } catch (error) {
      if (error instanceof ApiError && error.unauthorized) options.onUnauthorized?.(error);
      throw error;
    }
  };
  return {
    kind: 'http',
    async request<T>(method: HttpMethod, path: string, body?: unknown, requestOptions?: RequestOptions) {
      const url = new URL(path, resolveBase(options.baseUrl));
      for (const [key, value] of Object.entries(requestOptions?.query ?? {})) {
        url.searchParams.set(key, String(value));
      }
      const headers: Record<string, string> = { accept: 'application/json', ...authHeaders() };
      const init: RequestInit = { method, headers, credentials: 'omit' };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        init.body = JSON.stringify(body);
      }
      if (requestOptions?.signal) init.signal = requestOptions.signal;
      const result = await send(fetchImpl, url, init);
      return toEnvelopeOrSignOut<T>(result.status, result.body);
    },
    async installPackage(file) {
      const form = new FormData();
      form.append('file', file, file.name);
      const result = await send(fetchImpl, new URL('/api/zapk', resolveBase(options.baseUrl)), {
        method: 'POST',
        headers: { accept: 'application/json', ...authHeaders() },
        body: form,
        credentials: 'omit',
      });
      return toEnvelopeOrSignOut<PackageInstalled>(result.status, result.body);
    },
    mediaUrl(url) {
      // The engine names itself as it knows its address; the page reaches it as the page's origin.
      const base = resolveBase(options.baseUrl);
      const parsed = new URL(url, base);
      return parsed.pathname.startsWith('/api/')
        ? new URL(parsed.pathname + parsed.search, base).href
        : parsed.href;
    },
    mediaHeaders: authHeaders,
    subscribe(listener, onStatus) {
      const EventSourceImpl = options.EventSource ?? globalThis.EventSource;
      let source: EventSource | null = null;
      let retry: ReturnType<typeof setTimeout> | undefined;
      // Where a feed opened again takes up, so that no event is missed in between.
      let lastEventId = '';
      const seen = (message: MessageEvent<string>) => {
        if (message.lastEventId) lastEventId = message.lastEventId;
      };
      const onCallback = (message: MessageEvent<string>) => {
        seen(message);
        const body = parseData<EngineEvent>(message);
        if (body) listener({ type: 'callback', body });
      };
      const onDelivery = (message: MessageEvent<string>) => {
        seen(message);
        const record = parseData<DeliveryRecord>(message);
        if (record) listener({ type: 'delivery', record });
      };
      const onOpen = () => onStatus?.(true);
      const onError = () => {
        onStatus?.(false);
        // EventSource retries a dropped connection itself, but gives up for good on an answer that is
        // no feed (the engine's 503 when it serves as many feeds as it may, a 401): open it again later.
        if (source?.readyState === EventSourceImpl.CLOSED && retry === undefined)
          retry = setTimeout(open, FEED_REOPEN_MS);
      };
      const close = () => {
        if (!source) return;
        source.removeEventListener('callback', onCallback);
        source.removeEventListener('delivery', onDelivery);
        source.removeEventListener('open', onOpen);
        source.removeEventListener('error', onError);
        source.close();
        source = null;
      };
      const open = () => {
        retry = undefined;
        close();
        // EventSource cannot send headers, so the feed alone takes the token in its query string.
        const url = new URL('/api/events/stream', resolveBase(options.baseUrl));
        const token = options.getToken();
        if (token) url.searchParams.set('token', token);
        if (lastEventId) url.searchParams.set('last_event_id', lastEventId);
        source = new EventSourceImpl(url.toString());
        source.addEventListener('callback', onCallback);
        source.addEventListener('delivery', onDelivery);
        source.addEventListener('open', onOpen);
        source.addEventListener('error', onError);
      };
      open();
      return () => {
        clearTimeout(retry);
        close();
      };
    },
  };
}

/** POST /api/auth/token with the sign-in form's credentials (no Authorization header). */
export async function requestToken(
  username: string,
  password: string,
  options: { baseUrl?: string; fetch?: typeof fetch } = {},
): Promise<IssuedToken> {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const url = new URL('/api/auth/token', resolveBase(options.baseUrl));
  const result = await send(fetchImpl, url, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
    credentials: 'omit',
  });
  const envelope = toEnvelope<IssuedToken>(result.status, result.body);
  const data = envelope.data;
  if (!data || typeof data.access_token !== 'string' || typeof data.expires_in !== 'number') {
    throw new ApiError(result.status, NO_ENVELOPE, 'the engine answered without a token');
  }
  return data;
}
