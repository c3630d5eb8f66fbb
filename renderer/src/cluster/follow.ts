/**
 * The web console following its operator to another node of the site when the node that served it
 * stops answering. The session goes along in the address's fragment, which a browser never sends to
 * a server (not in a request, a Referer or a server's log); the console of the node it goes to takes
 * it and removes it from the address before anything else runs (main.tsx). No query string ever
 * carries it. docs/security.md says why.
 */
import type { Site } from './site';

/** The console moves this long after its node stopped answering, unless it answers again meanwhile. */
export const FOLLOW_AFTER_MS = 5_000;

/** What starts a fragment that carries a session. */
const MARK = 'vc-follow';

/** A session handed to the console of another node, and where the operator was. */
export interface Handoff {
  token: string;
  username: string;
  /** When the token expires (ms since the epoch). */
  expiresAt: number;
  /** The console's route (the fragment's path, e.g. /tasks). */
  path: string;
}

/** A node the console may move to. */
export interface FollowTarget {
  node: string;
  /** Its console's origin, from the URL it advertises. */
  origin: string;
}

/**
 * The other nodes the console may go on at: up when the site was last seen, reached at an http(s)
 * URL that is not this page's own, by name as the operator reads it.
 */
export function followTargets(site: Site, ownOrigin: string): FollowTarget[] {
  return site.nodes
    .filter((member) => member.node !== site.node && member.state === 'up')
    .flatMap((member) => {
      const origin = originOf(member.api_url);
      return origin && origin !== ownOrigin ? [{ node: member.node, origin }] : [];
    })
    .sort((a, b) => a.node.localeCompare(b.node, undefined, { numeric: true }));
}

/** The address of the target's console, the session in its fragment. */
export function handoffUrl(target: FollowTarget, handoff: Handoff): string {
  const params = new URLSearchParams({
    token: handoff.token,
    username: handoff.username,
    expires_at: String(handoff.expiresAt),
    path: handoff.path,
  });
  return `${target.origin}/#${MARK}&${params}`;
}

/** The session a fragment carries; null for any other fragment (a route) or one that is not whole. */
export function parseHandoff(hash: string): Handoff | null {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!body.startsWith(`${MARK}&`)) return null;
  const params = new URLSearchParams(body.slice(MARK.length + 1));
  const token = params.get('token');
  const username = params.get('username');
  const expiresAt = Number(params.get('expires_at'));
  const path = params.get('path') ?? '';
  if (!token || !username || !Number.isFinite(expiresAt)) return null;
  // Only a route of this console: the path lands in this page's own fragment, nowhere else.
  return { token, username, expiresAt, path: path.startsWith('/') ? path : '/' };
}

/**
 * Takes the session a page was opened with, if any, and at once replaces the address with the route
 * alone: the token leaves the address bar and the history entry before the console renders.
 */
export function takeHandoff(location: Location, history: History): Handoff | null {
  const handoff = parseHandoff(location.hash);
  if (handoff || location.hash.startsWith(`#${MARK}`))
    history.replaceState(null, '', `${location.pathname}#${handoff?.path ?? '/'}`);
  return handoff;
}

function originOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : null;
  } catch {
    return null;
  }
}
