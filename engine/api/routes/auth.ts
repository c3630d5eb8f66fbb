import { Type } from '@sinclair/typebox';
import type { Accounts } from '../../auth/accounts';
import { ADMIN_USER } from '../../auth/accounts';
import type { StreamTokens } from '../../auth/stream-tokens';
import type { Clock } from '../../clock';
import { bearerToken } from '../authenticate';
import { clientKey } from '../client-address';
import { Envelope, ok } from '../envelope';
import { ApiError } from '../errors';
import { type LinkRoutes, mintLinks } from '../links';
import type { RoutePlugin } from '../route-plugin';
import { Health, LinkData, LinkRequest, PasswordChange, TokenData, TokenRequest } from '../schemas';

export const authRoutes: RoutePlugin<{
  accounts: Accounts;
  clock: Clock;
  streamTokens: StreamTokens;
  links: LinkRoutes;
  version: string;
  startedAt: number;
}> = async (app, { accounts, clock, streamTokens, links, version, startedAt }) => {
  app.get(
    '/api/health',
    {
      config: { public: true },
      schema: {
        tags: ['health'],
        summary: 'Liveness; open, returns nothing sensitive',
        security: [],
        response: { 200: Envelope(Health) },
      },
    },
    async () =>
      ok({
        status: 'ok' as const,
        version: version,
        uptime_s: Math.floor((clock.now() - startedAt) / 1000),
      }),
  );

  app.post(
    '/api/auth/token',
    {
      config: { public: true, refusals: ['BAD_CREDENTIALS', 'TOO_MANY_LOGINS'] },
      schema: {
        tags: ['auth'],
        summary: '4.1 Get an access token',
        security: [],
        body: TokenRequest,
        response: { 200: Envelope(TokenData) },
      },
    },
    async (request) => {
      const { username, password } = request.body;
      const { token, expiresIn, initialPassword } = await accounts.signIn(
        username,
        password,
        clientKey(request.ip),
      );
      return ok({
        access_token: token,
        token_type: 'Bearer' as const,
        expires_in: expiresIn,
        // Only when it is so: the contract's answer stays as it is for every other sign-in.
        ...(initialPassword && { password_change_required: true }),
      });
    },
  );

  app.put(
    '/api/auth/password',
    {
      // A wrong current password counts as a failed login.
      config: { refusals: ['TOO_MANY_LOGINS'] },
      schema: {
        tags: ['auth'],
        summary:
          "Extension: change the signed-in user's password, given its current one; revokes the user's tokens",
        body: PasswordChange,
        response: { 200: Envelope(Type.Object({ username: Type.String() })) },
      },
    },
    async (request) => {
      const username = request.username ?? ADMIN_USER;
      const { current_password, password } = request.body;
      await accounts.changePassword(username, current_password, password, clientKey(request.ip));
      return ok({ username });
    },
  );

  app.post(
    '/api/auth/link',
    {
      schema: {
        tags: ['auth'],
        summary:
          "Extension: short-lived link tokens for pictures and downloads (<img src>, download links), each for one resource's scope",
        body: LinkRequest,
        response: { 200: Envelope(LinkData) },
      },
    },
    async (request) => {
      const minted = mintLinks(links, streamTokens, request.body.paths);
      if ('refused' in minted) {
        const at = `paths[${minted.refused}]`;
        throw new ApiError(
          'INVALID_PARAMETER',
          `body.${at}: is not a picture or download of the API that takes a link (task snapshot or heatmap, alarm picture or export, optimization export or sample image)`,
          {},
          at,
        );
      }
      const expiresIn = Math.floor((streamTokens.expiresAt() - clock.now()) / 1000);
      return ok({ links: minted, expires_in: expiresIn });
    },
  );

  app.post(
    '/api/auth/logout',
    {
      schema: {
        tags: ['auth'],
        summary: 'Extension: sign out; revokes the token this request presents (no body)',
        body: Type.Optional(Type.Null()),
        response: { 200: Envelope(Type.Object({ username: Type.String() })) },
      },
    },
    async (request) => {
      // authenticate() accepted this header's token (logout takes no ?token=), so it is the one to end.
      const token = bearerToken(request.headers.authorization);
      if (token) await accounts.revokeToken(token);
      return ok({ username: request.username ?? ADMIN_USER });
    },
  );
};
