import type { FastifyRequest } from 'fastify';
import type { Accounts } from '../auth/accounts';
import type { HoldEnd } from '../auth/token-holds';
import { CONNECTIONS_RETRY_AFTER_S } from './connections';
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
  const slots = request.server.connectionSlots;
  const socket = request.raw.socket;
  if (config.public) {
    // A reserved connection slot is for requests with a token: the console's, when all others are taken.
    if (!slots.onProbation(socket)) return;
    throw new ApiError(
      'CONNECTIONS_BUSY',
      'every connection slot open to clients without a token is taken; retry shortly',
      { 'retry-after': String(CONNECTIONS_RETRY_AFTER_S) },
    );
  }
  // A request another node of the site authenticated and forwarded to this one, the task's owner.
  const forwardedUser = ctx.cluster?.routing.forwardedUser(request);
  if (forwardedUser !== undefined) {
    request.username = forwardedUser;
    return;
  }
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
  const check = await ctx.accounts.checkToken(token);
  if (!check.ok) throw invalidToken(check.reason === 'expired' ? 'expired' : 'invalid');
  request.username = check.username;
  request.tokenHash = check.tokenHash;
  slots.trust(socket);
}

const invalidToken = (state: string) =>
  new ApiError('INVALID_TOKEN', `the token is ${state}; get a new one from POST /api/auth/token`, {
    'www-authenticate': 'Bearer error="invalid_token"',
  });

/** 40102 for a request whose token was revoked or expired after it was authenticated. */
export const tokenEnded = () => invalidToken('revoked or expired');

/**
 * Ties a long-lived answer to the API token that opened it (see Accounts.hold): `end` runs when the
 * token is revoked or expires. Returns the function that lets go, for an answer that ends first;
 * null when the token already ended, since the request was authenticated. An answer opened with a
 * link token (a download link) is not held: that token opens one resource for minutes, is never
 * revoked, and was valid when the answer began.
 */
export function holdToken(
  accounts: Pick<Accounts, 'hold'>,
  request: FastifyRequest,
  end: (why: HoldEnd) => void,
): (() => void) | null {
  if (request.tokenHash === undefined) return () => {};
  return accounts.hold(request.tokenHash, end);
}
