import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyPluginAsync, RawServerDefault } from 'fastify';

/**
 * One route file: a Fastify plugin given only the parts of the engine its routes use, as fastify/demo
 * shapes its routes, so a route's reach is read from its options and a test can hand it stand-ins.
 * It inherits the API scope's authentication and audit hooks (app.ts registers it inside that scope).
 */
export type RoutePlugin<Deps extends Record<string, unknown>> = FastifyPluginAsync<
  Deps,
  RawServerDefault,
  TypeBoxTypeProvider,
  FastifyBaseLogger
>;
