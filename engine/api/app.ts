import { existsSync } from 'node:fs';
import { METHODS } from 'node:http';
import fastifyMultipart from '@fastify/multipart';
import fastifyStatic from '@fastify/static';
import fastifySwagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { registerOwnerProxy } from '../cluster/owner-proxy';
import { buildCsp, securityHeaders } from '../contract/csp';
import { ERRORS, type ErrorKind } from '../contract/errors';
import { DomainError } from '../domain-error';
import type { EngineLogger } from '../log/logger';
import { ajvErrorField, describeAjvError, queryAjv, strictAjv } from '../schema/ajv';
import { isDiskFull } from '../store/disk-full';
import { auditHooks } from './audit-hook';
import { authenticate } from './authenticate';
import { ConnectionSlots } from './connection-slots';
import {
  answerClientError,
  type ConnectionLimits,
  checkIntervalMs,
  DEFAULT_CONNECTION_LIMITS,
} from './connections';
import type { ApiContext } from './context';
import { toApiError } from './domain-errors';
import { ApiError } from './errors';
import { checkPeers } from './host-check';
import { LinkRoutes } from './links';
import { collectRoutes, openapiOptions } from './openapi';
import { alarmRoutes } from './routes/alarms';
import { auditRoutes } from './routes/audit';
import { authRoutes } from './routes/auth';
import { clipRoutes } from './routes/clips';
import { clusterRoutes } from './routes/cluster';
import { eventRoutes } from './routes/events';
import { imageRoutes } from './routes/images';
import { mediaRoutes } from './routes/media';
import { optimizationRoutes } from './routes/optimization';
import { packageRoutes } from './routes/packages';
import { reviewRoutes } from './routes/review';
import { systemRoutes } from './routes/system';
import { taskRoutes } from './routes/tasks';
import { MAX_PARAM_LENGTH } from './schemas';

const MiB = 1024 * 1024;
export const JSON_BODY_LIMIT = 1 * MiB;

const createFastify = (logger: EngineLogger, limits: ConnectionLimits) =>
  Fastify({
    // Typed as Fastify's logger, so that plugin scopes (which know no other) are the same type.
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: JSON_BODY_LIMIT,
    // Slow or stuck clients are cut off instead of holding a connection forever.
    connectionTimeout: 60_000,
    requestTimeout: 10 * 60_000,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    return503OnClosing: true,
    // One line per request drowns the log of a busy engine; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // What the router itself refuses (broken percent-encoding) is answered in the envelope too.
    frameworkErrors: (error, _request, reply) =>
      sendError(reply, 'INVALID_PARAMETER', `path: ${pathProblem(error.code)}`),
    http: {
      // A request without Host gets the envelope of the Host check (403), not Node's bare 400.
      requireHostHeader: false,
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: checkIntervalMs(limits),
    },
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();

export type Api = ReturnType<typeof createFastify>;

/** Fastify's own failures mapped onto the envelope's codes. */
const FASTIFY_ERRORS: Record<string, ErrorKind> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_PARAMETER',
  FST_REQ_FILE_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_PARTS_LIMIT: 'BODY_TOO_LARGE',
  FST_FILES_LIMIT: 'BODY_TOO_LARGE',
  FST_FIELDS_LIMIT: 'BODY_TOO_LARGE',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_NO_FORM_DATA: 'INVALID_PARAMETER',
};

/** Other client errors a plugin may raise, by HTTP status. */
const STATUS_ERRORS: Record<number, ErrorKind> = {
  400: 'INVALID_PARAMETER',
  404: 'ROUTE_NOT_FOUND',
  413: 'BODY_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

const sendError = (reply: FastifyReply, kind: ErrorKind, msg: string) =>
  reply.status(ERRORS[kind].status).send({ code: ERRORS[kind].code, msg });

const pathProblem = (code?: string) =>
  code === 'FST_ERR_BAD_URL'
    ? 'has broken percent-encoding'
    : `a segment is longer than the ${MAX_PARAM_LENGTH} characters an id may have`;

/** The HTTP server and its limits, logging to the engine's logger. */
export function createServer(logger: EngineLogger, connections: Partial<ConnectionLimits> = {}): Api {
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...connections };
  const app = createFastify(logger, limits);
  // Fastify routes only the common methods and answers others 404 before any route: every method
  // Node's parser accepts (CONNECT aside, which never reaches a request handler) is routed, so that a
  // known path answers it 405 with Allow like any wrong method.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method))
      app.addHttpMethod(method, { hasBody: true });
  }
  const slots = new ConnectionSlots(limits);
  slots.attach(app.server);
  app.decorate('connectionSlots', slots);
  return app;
}

/**
 * The HTTP API of the contract: envelope on every answer (errors included), strict validation of
 * every request, bearer-token auth on everything but the token and health endpoints.
 */
export async function buildApi(app: Api, ctx: ApiContext): Promise<Api> {
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'querystring' ? queryAjv : strictAjv).compile(schema as object),
  );
  app.setSchemaErrorFormatter((errors, dataVar) => {
    const first = errors[0];
    const root = dataVar === 'querystring' ? 'query' : dataVar;
    if (!first) return new ApiError('INVALID_PARAMETER', `${root}: is invalid`);
    const field = ajvErrorField(first);
    return new ApiError('INVALID_PARAMETER', describeAjvError(first, root), {}, field || undefined);
  });

  await app.register(fastifySwagger, openapiOptions(ctx.version, collectRoutes(app), JSON_BODY_LIMIT));
  await app.register(fastifyMultipart, { limits: { files: 2, fields: 10, parts: 12, fieldSize: 64 * 1024 } });
  // Sockets carry video to the console; what a client sends on them is never read.
  await app.register(fastifyWebsocket, { options: { maxPayload: 1024 } });
  if (ctx.cluster) await registerOwnerProxy(app);

  const routeTable = registerRouteTable(app);
  const links = new LinkRoutes(app);
  parseJsonBodies(app);
  app.addHook('onRequest', checkPeers(ctx.allowed));
  app.addHook('preParsing', async (request) => checkContentType(request));
  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    const error = toApiError(thrown) ?? thrown;
    if (error instanceof ApiError) {
      // What the answer leaves out (why a source did not open) is the operator's to read.
      if (thrown instanceof DomainError && thrown.cause !== undefined)
        request.log.warn({ err: thrown.cause }, error.message);
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      const field = error.field === undefined ? {} : { field: error.field };
      const reason = error.reason === undefined ? {} : { reason: error.reason };
      return reply.status(error.status).send({ code: error.code, msg: error.message, ...field, ...reason });
    }
    if (isDiskFull(error)) {
      request.log.warn({ err: error }, 'the data disk is full');
      return sendError(reply, 'DISK_FULL', 'the data disk is full; free some space and try again');
    }
    const kind = (error.code && FASTIFY_ERRORS[error.code]) || STATUS_ERRORS[error.statusCode ?? 500];
    if (kind)
      return sendError(reply, kind, kind === 'BODY_TOO_LARGE' ? bodyTooLarge(request, error) : error.message);
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 'INTERNAL', 'internal engine error; see the engine log');
  });

  // The API is one plugin whose routes all pass its authentication hook; only a route's own config
  // opens it (health, token). The console's files are registered outside it.
  await app.register(async (scope) => {
    const api = scope.withTypeProvider<TypeBoxTypeProvider>();
    api.addHook('onRequest', async (request) => authenticate(ctx, request));
    auditHooks(api, ctx.audit, ctx.clock);
    const cluster = ctx.cluster;
    if (cluster) api.addHook('preHandler', async (request, reply) => cluster.answerFromOwner(request, reply));
    api.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    const { accounts, streamTokens, tasks, video } = ctx;
    await api.register(authRoutes, {
      accounts,
      clock: ctx.clock,
      streamTokens,
      links,
      version: ctx.version,
      startedAt: ctx.startedAt,
    });
    await api.register(packageRoutes, {
      packages: ctx.packages,
      packageStore: ctx.packageStore,
      tmpDir: ctx.tmpDir,
    });
    await api.register(taskRoutes, {
      tasks,
      snapshots: ctx.snapshots,
      video,
      cluster: ctx.cluster,
      clips: ctx.clips,
    });
    await api.register(imageRoutes, { images: ctx.images, tasks, uploadMemory: ctx.uploadMemory });
    await api.register(mediaRoutes, { accounts, previews: ctx.previews, streamTokens, tasks, video });
    await api.register(optimizationRoutes, { accounts, optimizations: ctx.optimizations, tasks });
    await api.register(eventRoutes, { accounts, events: ctx.events, tasks, cluster: ctx.cluster });
    await api.register(alarmRoutes, { alarms: ctx.alarms });
    await api.register(reviewRoutes, { review: ctx.review });
    await api.register(clipRoutes, { clips: ctx.clips, tasks });
    await api.register(systemRoutes, { system: ctx.system });
    await api.register(auditRoutes, { audit: ctx.audit });
    await api.register(clusterRoutes, { cluster: ctx.cluster });
    unknownApiPaths(api, routeTable);
  });
  await app.register(async (scope) => serveConsole(scope.withTypeProvider<TypeBoxTypeProvider>(), ctx));
  return app;
}

function bodyTooLarge(request: FastifyRequest, error: FastifyError): string {
  // A multipart file part has its own limit, below the route's whole-body one.
  if (error.code === 'FST_REQ_FILE_TOO_LARGE')
    return 'a file part is larger than this endpoint accepts (images 20 MiB, packages 1 GiB)';
  const limit = request.routeOptions.bodyLimit ?? JSON_BODY_LIMIT;
  const size = limit >= MiB ? `${Math.round(limit / MiB)} MiB` : `${Math.round(limit / 1024)} KiB`;
  return `the body is larger than the ${size} this endpoint accepts`;
}

/**
 * JSON bodies, parsed by Fastify's secure parser, which refuses a "__proto__" key (and a
 * "constructor" holding "prototype") rather than let it reach an object's prototype. Such a body is
 * valid JSON, so it is refused as a field no endpoint takes (40001), not as broken JSON (40002).
 * No DELETE takes a body, and many clients send their JSON content type on every request: an empty
 * body there is no body, not broken JSON (which would leave the task or package in place).
 */
function parseJsonBodies(app: Api): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    if (request.method === 'DELETE' && body === '') return done(null, undefined);
    parseJson(request, body, (error, value) => done(error && isJson(body) ? prototypeKey() : error, value));
  });
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

const prototypeKey = () =>
  new ApiError(
    'INVALID_PARAMETER',
    'body: a "__proto__" key, or a "constructor" key holding "prototype", is not accepted anywhere in a body',
  );

/** Refuses a body of a type the route does not take before anything parses it. */
async function checkContentType(request: FastifyRequest): Promise<void> {
  const hasBody =
    request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  if (!hasBody || request.method === 'GET' || request.method === 'DELETE' || request.method === 'HEAD')
    return;
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const accepts = request.routeOptions.config.accepts ?? ['application/json'];
  if (!accepts.includes(type)) {
    throw new ApiError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Type "${type || '(none)'}" is not accepted here; send ${accepts.join(' or ')}`,
    );
  }
}

/** `exact`: a path without parameters, which the router prefers to a parametric one that matches too. */
type RouteTable = { pattern: RegExp; exact: boolean; methods: Set<string> }[];

/** Remembers every API route so that a known path with a wrong method answers 405 with Allow, not 404. */
function registerRouteTable(app: Api): RouteTable {
  const routes: RouteTable = [];
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') || route.url.endsWith('*')) return;
    const source = `^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`;
    let entry = routes.find((r) => r.pattern.source === source);
    if (!entry) {
      entry = { pattern: new RegExp(source), exact: !route.url.includes(':'), methods: new Set() };
      routes.push(entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  app.setNotFoundHandler(async (request, reply) =>
    sendError(reply, 'ROUTE_NOT_FOUND', `no endpoint ${request.method} ${request.url.split('?')[0]}`),
  );
  return routes;
}

/**
 * Every other path under /api (as the router decodes it) is a route of the API too, so an unknown
 * endpoint or a wrong method is authenticated like the rest before it answers 404 or 405.
 */
function unknownApiPaths(api: Api, routes: RouteTable): void {
  const answer = async (request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
    const rest = request.params['*'];
    const path = rest === undefined ? '/api' : `/api/${rest}`;
    const matching = routes.filter((r) => r.pattern.test(path));
    // A path that is an endpoint of its own (e.g. POST /api/review/items/review) is not also a value
    // of a sibling's parameter (GET /api/review/items/{item_id}).
    const exact = matching.filter((r) => r.exact);
    const allowed = [...new Set((exact.length > 0 ? exact : matching).flatMap((r) => [...r.methods]))];
    // The path has the shape of an endpoint that takes this method: the router refused a parameter.
    if (allowed.includes(request.method))
      return sendError(reply, 'INVALID_PARAMETER', `path: ${pathProblem()}`);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(
        reply,
        'METHOD_NOT_ALLOWED',
        `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`,
      );
    }
    return sendError(reply, 'ROUTE_NOT_FOUND', `no endpoint ${request.method} ${path}`);
  };
  // Answered in the route's onRequest, once authenticated, before the body's type is checked or the
  // body read: a wrong method is 405 whatever it carries. The handler is never reached.
  api.all('/api', { schema: { hide: true }, onRequest: answer }, answer);
  api.all('/api/*', { schema: { hide: true }, onRequest: answer }, answer);
}

/** The console as a web page: static files, with index.html for the app's own routes (its own plugin). */
async function serveConsole(app: Api, ctx: ApiContext): Promise<void> {
  const dir = ctx.consoleDir;
  if (!dir || !existsSync(dir)) return;
  const headers = securityHeaders(buildCsp());
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(headers);
  });
  await app.register(fastifyStatic, { root: dir, prefix: '/', wildcard: false, index: ['index.html'] });
  app.get('/*', { schema: { hide: true } }, async (_request, reply) => reply.sendFile('index.html'));
}
