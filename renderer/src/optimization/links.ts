/**
 * Links to the engine's binary answers (task snapshots and heatmaps, alarm pictures and exports, a
 * run's sample images and dataset zip). An <img> or a download link cannot send a header: the web
 * console signs each link with a short-lived link token for that resource (LinkSigner), never its
 * API token; the desktop app links the engine's own origin without a token, like its HLS video, and
 * main adds the Authorization header.
 */
import { apiPath } from '../transport';
import type { LinkSigner } from '../transport/link-signer';

export interface LinkAccess {
  /** Origin the engine is reached at: the page's own in the web console, the engine's in the app. */
  base: string;
  /** The web console's link tokens; null in the desktop app. */
  signer: LinkSigner | null;
  /**
   * The web console's API token, for video sockets alone: a socket is a connection that ends with
   * its token, not a link a browser keeps in its history. Null in the desktop app.
   */
  token: string | null;
}

/** The URL of an engine path (which may carry its own query), or null if it leaves /api/. */
function engineUrl(path: string, base: string): URL | null {
  let url: URL;
  try {
    url = new URL(path, base);
  } catch {
    return null;
  }
  // A path from an answer must not send a token anywhere but the engine's API.
  if (url.origin !== new URL(base).origin || !url.pathname.startsWith('/api/')) return null;
  return url;
}

/**
 * An absolute link to an engine picture or download; null if it leaves /api/, or until the web
 * console has its link token (the signer re-renders its subscribers then).
 */
export function engineLink(path: string, access: LinkAccess): string | null {
  const url = engineUrl(path, access.base);
  if (!url) return null;
  return access.signer ? access.signer.sign(url) : url.href;
}

/** The ws:// address of a video socket, with the web console's API token. */
export function socketLink(path: string, access: LinkAccess): string | null {
  const url = engineUrl(path, access.base);
  if (!url) return null;
  if (access.token) url.searchParams.set('token', access.token);
  return url.href.replace(/^http/, 'ws');
}

export function exportPath(taskId: string, optimizationId: string): string {
  return apiPath`/api/task/${taskId}/optimization/${optimizationId}/export`;
}
