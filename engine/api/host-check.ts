import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors';

/** Names and origins an operator allows beyond the built-in ones (IP literals, localhost, same origin). */
export interface AllowedPeers {
  /** Host names the engine answers to besides IP literals and localhost (DNS names on the LAN). */
  hosts: readonly string[];
  /** Origins of pages on other origins that may call the API (the desktop console's app://console). */
  origins: readonly string[];
}

const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::\d{1,5})?$/i;

const bareName = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * The host name in the URL a node of a cluster advertises (`--advertise-url`): the other nodes'
 * consoles send the operator there when their own node dies, so the node answers to it as to a name
 * the operator listed. None for an IP literal (always answered) or no URL.
 */
export function advertisedHosts(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const { hostname } = new URL(url);
    return hostname && !hostname.startsWith('[') && isIP(hostname) === 0 ? [hostname] : [];
  } catch {
    return [];
  }
}

/**
 * Whether a Host header names this engine: an IP literal (v4 or [v6]) or localhost always, other
 * names only when the operator listed them. A DNS-rebinding page reaches a loopback engine under a
 * name of its own, never under an address, so refusing unknown names shuts it out.
 */
export function isAllowedHost(header: string | undefined, names: ReadonlySet<string>): boolean {
  const name = header ? HOST_HEADER.exec(header)?.[1] : undefined;
  if (!name) return false;
  if (name.startsWith('[')) return isIP(name.slice(1, -1)) === 6;
  if (isIP(name) === 4) return true;
  const bare = bareName(name);
  return bare === 'localhost' || names.has(bare);
}

/**
 * Whether a request's Origin may call the API: no Origin (not a browser, or a same-origin GET), the
 * engine's own origin (the web console it serves) or one the operator allowed. Defense in depth
 * against cross-site requests; the bearer token is the real gate.
 */
export function isAllowedOrigin(
  origin: string | undefined,
  host: string,
  origins: ReadonlySet<string>,
): boolean {
  if (origin === undefined) return true;
  if (origins.has(origin.toLowerCase())) return true;
  try {
    const page = new URL(origin);
    return (
      (page.protocol === 'http:' || page.protocol === 'https:') &&
      page.host === new URL(`http://${host}`).host
    );
  } catch {
    return false;
  }
}

/**
 * The onRequest hook that refuses, before anything else, a Host or Origin this engine does not serve.
 * A page of an allowed origin elsewhere (the desktop console at app://console, whose HLS player
 * fetches the engine's playlists and segments) is also told by CORS that it may read the answer.
 */
export function checkPeers(
  allowed: AllowedPeers,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const names = new Set(allowed.hosts.map(bareName));
  const origins = new Set(allowed.origins.map((origin) => origin.toLowerCase()));
  return async (request, reply) => {
    const host = request.headers.host;
    if (!isAllowedHost(host, names)) {
      throw new ApiError(
        'HOST_NOT_ALLOWED',
        `Host "${host ?? ''}" is not a name of this engine: use its IP address or localhost, or list the name in allowed_hosts of <data-dir>/settings.json`,
      );
    }
    if (!isAllowedOrigin(request.headers.origin, host ?? '', origins)) {
      throw new ApiError(
        'ORIGIN_NOT_ALLOWED',
        `requests from pages of ${request.headers.origin} are not accepted; use the console this engine serves`,
      );
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origins.has(origin.toLowerCase()))
      reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
  };
}
