import type { FastifyRequest } from 'fastify';
import type { StreamTokens } from '../auth/stream-tokens';
import type { Api } from './app';

/**
 * Links: the engine's pictures and downloads that a page puts in an <img src> or a download href,
 * which cannot send a header. Their ?token= is a link token, never the API token (which a browser
 * would keep in its history and a proxy in its log): an HMAC over the resource's scope and an expiry
 * (StreamTokens, 5 to 10 minutes), minted by POST /api/auth/link for a path. A route is a link route
 * when its config names its scope: what the params it is called with give access to (a task's
 * pictures, one alarm's, one optimization run's dataset).
 */
export type LinkScope = (params: Record<string, string>) => unknown[];

interface LinkRoute {
  pattern: RegExp;
  names: string[];
  scope: LinkScope;
}

/** Every link route of the API, to resolve a path to its scope as the router would. */
export class LinkRoutes {
  private readonly routes: LinkRoute[] = [];

  /** Collects the link routes as they are registered: call before any route is added. */
  constructor(app: Api) {
    app.addHook('onRoute', (route) => {
      const scope = route.config?.linkScope;
      if (!scope || ![route.method].flat().includes('GET')) return;
      const names: string[] = [];
      const source = route.url
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:([A-Za-z_]+)/g, (_, name: string) => {
          names.push(name);
          return '([^/?#]+)';
        });
      this.routes.push({ pattern: new RegExp(`^${source}/?$`), names, scope });
    });
  }

  /** The scope a link token for this path (query aside) must have; undefined for no link route. */
  scopeOf(path: string): string | undefined {
    const pathname = path.split(/[?#]/, 1)[0] ?? '';
    for (const route of this.routes) {
      const match = pathname.match(route.pattern);
      if (!match) continue;
      try {
        const params = Object.fromEntries(
          route.names.map((name, i) => [name, decodeURIComponent(match[i + 1] ?? '')]),
        );
        return linkScopeKey(route.scope(params));
      } catch {
        // Broken percent-encoding: the router refuses such a path too.
        return undefined;
      }
    }
    return undefined;
  }
}

/** A scope as StreamTokens signs it: tagged as a link's, so no stream token can stand for it. */
export const linkScopeKey = (scope: unknown[]) => JSON.stringify(['link', ...scope]);

/** The scope a link route's request gives access to, from the params the router matched. */
export function requestLinkScope(request: FastifyRequest): string | undefined {
  const scope = request.routeOptions.config.linkScope;
  return scope ? linkScopeKey(scope(request.params as Record<string, string>)) : undefined;
}

/** A path with its link token in the query. */
export function linkUrl(path: string, token: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
}

/** Mints a link token for each path; undefined for a path that is no link route. */
export function mintLinks(
  routes: LinkRoutes,
  tokens: StreamTokens,
  paths: readonly string[],
): { path: string; url: string }[] | { refused: number } {
  const links: { path: string; url: string }[] = [];
  for (const [i, path] of paths.entries()) {
    const scope = routes.scopeOf(path);
    if (scope === undefined) return { refused: i };
    links.push({ path, url: linkUrl(path, tokens.issue(scope)) });
  }
  return links;
}
