/**
 * Pure security policy of the desktop shell: Content-Security-Policy, which navigations and requests
 * the window may make, and how app:// URLs map onto the built console. No Electron import, so all of
 * it is unit-tested in plain Node.
 */
import { extname, resolve, sep } from 'node:path';

/** The console is served from this privileged custom scheme (never file://): a real, stable origin. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'console';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

/**
 * scheme://host[:port] of a URL, or null when it has none that we trust (file:, data:, blob:,
 * javascript:, about:, URLs with credentials, unparsable text). Works for custom schemes too, where
 * WHATWG `URL.origin` would be "null".
 */
export function originOf(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.username || parsed.password) return null;
  if (['file:', 'data:', 'blob:', 'javascript:', 'about:'].includes(parsed.protocol)) return null;
  if (!parsed.host) return null;
  return `${parsed.protocol}//${parsed.host}`.toLowerCase();
}

/** Whether the window may navigate to `url`: only to pages of the app's own origin. */
export function isAllowedNavigation(url: string, appOrigin: string): boolean {
  const origin = originOf(url);
  return origin !== null && origin === appOrigin.toLowerCase();
}

/**
 * Whether the renderer may load `url` at all (session-wide onBeforeRequest): the app's own origin,
 * the local engine, in-memory data:/blob: content and devtools. Everything else, i.e. any remote
 * content, is cancelled.
 */
export function isAllowedRequest(url: string, allowedOrigins: readonly string[]): boolean {
  if (/^(data|blob):/i.test(url)) return true;
  if (/^devtools:/i.test(url)) return true;
  const origin = originOf(url);
  if (origin === null) return false;
  return allowedOrigins.some((allowed) => allowed.toLowerCase() === origin);
}

/**
 * Maps an app://console/... URL to a file inside `rootDir` (the built renderer), or null when the URL
 * is foreign or tries to leave the folder (encoded dots, backslashes, NUL). "/" is index.html.
 */
export function resolveAppAsset(rootDir: string, url: string, appOrigin: string = APP_ORIGIN): string | null {
  if (originOf(url) !== appOrigin.toLowerCase()) return null;
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(url).pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0') || pathname.includes('\\')) return null;
  const segments = pathname.split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => segment === '.' || segment === '..' || segment.includes(':'))) return null;
  const root = resolve(rootDir);
  const file = resolve(root, segments.length > 0 ? segments.join('/') : 'index.html');
  if (!file.startsWith(root + sep)) return null;
  return file;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

export function contentTypeFor(file: string): string {
  return CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The engine's files the page loads or downloads without a header of its own: an AI video's (4.10)
 * or a raw preview's (4.12) HLS playlist and segments, an optimization sample's image, a dataset export.
 */
const MEDIA_PATH =
  /^\/api\/((task\/[^/]+\/livestream\/[^/]+|stream\/[^/]+)\/[^/]+|task\/[^/]+\/optimization\/[^/]+\/(samples\/[^/]+\/image|export))$/;

/** A dataset export of the engine (4.13): a link to it is a download, never a navigation. */
export function isEngineExport(url: string, engineOrigin: string): boolean {
  if (originOf(url) !== engineOrigin.toLowerCase()) return false;
  return /^\/api\/task\/[^/]+\/optimization\/[^/]+\/export$/.test(new URL(url).pathname);
}

/** A GET of the engine's HLS files, samples or exports: the requests main authorises for the page. */
export function isEngineMedia(request: { url: string; method: string }, engineOrigin: string): boolean {
  if (request.method !== 'GET' || originOf(request.url) !== engineOrigin.toLowerCase()) return false;
  return MEDIA_PATH.test(new URL(request.url).pathname);
}

/**
 * The request headers of a request the console page makes: for a GET of the engine's HLS files, the
 * engine's Bearer token is set (replacing any Authorization the page sent), so that the video the
 * page plays is authorised while the token never reaches the page. Every other request (the API goes
 * through IPC) is returned untouched.
 */
export function withEngineAuthorization(
  request: { url: string; method: string },
  headers: Record<string, string>,
  engineOrigin: string,
  token: () => string,
): Record<string, string> {
  if (!isEngineMedia(request, engineOrigin)) return headers;
  const kept = Object.fromEntries(
    Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'),
  );
  return { ...kept, Authorization: `Bearer ${token()}` };
}
