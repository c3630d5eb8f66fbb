/**
 * Links to the engine's binary answers of a run (sample images, the dataset zip). An <img> or a
 * download link cannot send a header: the web console puts its token in the query (the engine takes
 * ?token= on exactly these paths); the desktop app links the engine's own origin without a token,
 * like its HLS video, and main adds the Authorization header.
 */
import { apiPath } from '../transport';

export interface LinkAccess {
  /** Origin the engine is reached at: the page's own in the web console, the engine's in the app. */
  base: string;
  /** The web console's token; null in the desktop app. */
  token: string | null;
}

/** An absolute link to an engine path (which may carry its own query), or null if it leaves /api/. */
export function engineLink(path: string, access: LinkAccess): string | null {
  let url: URL;
  try {
    url = new URL(path, access.base);
  } catch {
    return null;
  }
  // A path from an answer must not send the token anywhere but the engine's API.
  if (url.origin !== new URL(access.base).origin || !url.pathname.startsWith('/api/')) return null;
  if (access.token) url.searchParams.set('token', access.token);
  return url.href;
}

export function exportPath(taskId: string, optimizationId: string): string {
  return apiPath`/api/task/${taskId}/optimization/${optimizationId}/export`;
}
