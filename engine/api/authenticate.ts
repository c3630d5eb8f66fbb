import type { FastifyRequest } from 'fastify';
import type { ApiContext } from './context';
import { ApiError } from './errors';
import { requestLinkScope } from './links';

// RFC 7235: the scheme is case-insensitive and one or more spaces separate it from the credentials.
const BEARER = /^bearer +(\S+)$/i;

/** The token of an "Authorization: Bearer <token>" header, or undefined for any other header. */
export const bearerToken = (header: string | undefined): string | undefined =>
  header ? BEARER.exec(header)?.[1] : undefined;

/**
 * The onRequest hook of every route of the API plugin (its catch-all for unknown paths included):
 * the route that matched says whether it is open (config.public) and whether it also takes ?token=.
 * Never decided from the URL's text, which the router decodes and normalises in many ways.
 */
export async function authenticate(ctx: ApiContext, request: FastifyRequest): Promise<void> {
  const config = request.routeOptions.config;
  if (config.public) return;
  const linkScope = requestLinkScope(request);
  const query =
    config.queryToken || linkScope !== undefined ? (request.query as { token?: unknown }).token : undefined;
  const header = bearerToken(request.headers.authorization);
  // A link's ?token= is a link token for this resource and nothing else, never the API token.
  if (header === undefined && typeof query === 'string' && linkScope !== undefined) {
    if (ctx.streamTokens.verify(linkScope, query)) return;
    throw new ApiError(
      'INVALID_TOKEN',
      "the link's token is invalid, expired or for another resource; get a new link from POST /api/auth/link, or send the API token in the Authorization header",
      { 'www-authenticate': 'Bearer error="invalid_token"' },
    );
  }
  const token = header ?? (typeof query === 'string' ? query : undefined);
  if (!token) {
    throw new ApiError(
      'MISSING_TOKEN',
      'missing Authorization header: send "Authorization: Bearer <token>" from POST /api/auth/token',
      {
        'www-authenticate': 'Bearer',
      },
    );
  }
  // A segment of an HLS stream also takes the short-lived token its playlist lists, for it alone.
  const scope = config.segmentScope?.(request.params);
  if (scope !== undefined && ctx.streamTokens.verify(scope, token)) return;
  const check = ctx.accounts.checkToken(token);
  if (!check.ok) {
    throw new ApiError(
      'INVALID_TOKEN',
      `the token is ${check.reason === 'expired' ? 'expired' : 'invalid'}; get a new one from POST /api/auth/token`,
      {
        'www-authenticate': 'Bearer error="invalid_token"',
      },
    );
  }
  request.username = check.username;
}
