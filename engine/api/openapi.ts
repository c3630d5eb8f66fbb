import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { OptionalKind, type TSchema } from '@sinclair/typebox';
import type { RouteOptions } from 'fastify';
import { ERRORS, type ErrorKind } from '../contract/errors';
import { ErrorEnvelope } from './envelope';

/**
 * The OpenAPI 3.0.3 document of the API (GET /api/openapi.json). @fastify/swagger builds it from the
 * routes' schemas; this module completes each operation with what the schemas cannot say: every
 * envelope error it can answer with (one shared schema), the media types of answers that are not
 * JSON, the bodies of uploads, and the 3.0 forms of the few JSON-schema keywords 3.0 spells otherwise.
 */

/** An upload's file parts: multipart file parts, base64 strings of a JSON object, or (one part) a raw body. */
export interface UploadParts {
  readonly required: readonly string[];
  readonly optional?: readonly string[];
}

const ERROR_SCHEMA = 'ErrorEnvelope';
const ERROR_REF = { $ref: `#/components/schemas/${ERROR_SCHEMA}` };

/** Refused before any route is matched (the HTTP parser, header and request timeouts, Host and Origin). */
const EVERY_REQUEST: readonly ErrorKind[] = [
  'MALFORMED_REQUEST',
  'REQUEST_TIMEOUT',
  'HEADERS_TOO_LARGE',
  'HOST_NOT_ALLOWED',
  'ORIGIN_NOT_ALLOWED',
  // A path the router refuses (broken percent-encoding, an id longer than it matches) or a failed schema.
  'INVALID_PARAMETER',
  'INTERNAL',
];
/**
 * Any method but GET may carry a body, whose type, size and JSON are checked before the handler, and
 * may write, which a full data disk refuses.
 */
const WITH_BODY: readonly ErrorKind[] = [
  'MALFORMED_JSON',
  'BODY_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'DISK_FULL',
];
const PUBLIC: readonly ErrorKind[] = ['CONNECTIONS_BUSY'];
const PROTECTED: readonly ErrorKind[] = ['MISSING_TOKEN', 'INVALID_TOKEN'];

/** What a call on a running task of one mode refuses with (TaskRegistry.liveTask). */
export const LIVE_TASK: readonly ErrorKind[] = ['TASK_NOT_FOUND', 'TASK_CLOSED', 'WRONG_TASK_MODE'];
/** What a task's choice of package and apps is refused with (tasks/validation.ts: checkApps). */
export const TASK_APPS: readonly ErrorKind[] = [
  'PACKAGE_NOT_FOUND',
  'APP_NOT_FOUND',
  'LICENSE_EXPIRED',
  'NOT_CHANGE_DETECTION_APP',
  'CHANGE_DETECTION_NOT_DIFF',
  'TIME_SERIES_NOT_VIDEO',
];
/** What an uploaded image is refused with, from its bytes to its analysis (images/). */
export const IMAGE_UPLOAD: readonly ErrorKind[] = [
  ...LIVE_TASK,
  'INVALID_IMAGE',
  'UNSUPPORTED_IMAGE_TYPE',
  'IMAGE_TOO_LARGE',
  'IMAGE_TOO_SOON',
  'MODEL_NOT_SUPPORTED',
  'IMAGES_BUSY',
];

/** Whether requests of the route may carry a body that is read (GET's never is). */
const takesBody = (route: Pick<RouteOptions, 'method'>) =>
  ![route.method].flat().every((method) => method === 'GET' || method === 'HEAD');

/** Every envelope error a route can answer with: those of every request, of its kind, and its own. */
function routeRefusals(route: Pick<RouteOptions, 'method' | 'config'>): ErrorKind[] {
  const kinds = [
    ...EVERY_REQUEST,
    ...(route.config?.public ? PUBLIC : PROTECTED),
    ...(takesBody(route) ? WITH_BODY : []),
    ...(route.config?.refusals ?? []),
    // Cluster mode: asked of another node, the route waits for the task's owner.
    ...(route.config?.ownerBound ? (['OWNER_UNREACHABLE'] as const) : []),
  ];
  return [...new Set(kinds)];
}

/** Headers that come with some refusals (RFC 7235 challenge, when to try again). */
const CHALLENGE = {
  'WWW-Authenticate': {
    description: 'Bearer without a token, Bearer error="invalid_token" for a bad one',
    schema: { type: 'string' },
  },
};
const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } };
const ERROR_HEADERS: Partial<Record<ErrorKind, Record<string, object>>> = {
  MISSING_TOKEN: CHALLENGE,
  INVALID_TOKEN: CHALLENGE,
  TOO_MANY_LOGINS: RETRY_AFTER,
  VIDEO_LIMIT: RETRY_AFTER,
  CONNECTIONS_BUSY: RETRY_AFTER,
  FEEDS_BUSY: RETRY_AFTER,
};

/** The responses of an operation's refusals, one per status, each listing its codes. */
function errorResponses(kinds: readonly ErrorKind[]): Record<string, object> {
  const byStatus = new Map<number, ErrorKind[]>();
  for (const kind of kinds)
    byStatus.set(ERRORS[kind].status, [...(byStatus.get(ERRORS[kind].status) ?? []), kind]);
  const responses: Record<string, object> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    list.sort((a, b) => ERRORS[a].code - ERRORS[b].code);
    const headers = Object.assign({}, ...list.map((kind) => ERROR_HEADERS[kind] ?? {}));
    responses[status] = {
      description: list.map((kind) => `${ERRORS[kind].code} ${kind}: ${ERRORS[kind].meaning}`).join('\n\n'),
      ...(Object.keys(headers).length > 0 && { headers }),
      content: { 'application/json': { schema: ERROR_REF } },
      'x-error-codes': list.map((kind) => ERRORS[kind].code),
    };
  }
  return responses;
}

const BINARY = { type: 'string', format: 'binary' };

/** The request body of an upload in each content type the route accepts. */
function uploadBody(parts: UploadParts, accepts: readonly string[]): object {
  const names = [...parts.required, ...(parts.optional ?? [])];
  const object = (format: string) => ({
    type: 'object',
    required: [...parts.required],
    properties: Object.fromEntries(names.map((name) => [name, { type: 'string', format }])),
    additionalProperties: false,
  });
  const content: Record<string, object> = {};
  for (const type of accepts) {
    if (type === 'multipart/form-data') content[type] = { schema: object('binary') };
    else if (type === 'application/json') content[type] = { schema: object('byte') };
    else content[type] = { schema: BINARY };
  }
  return { required: true, content };
}

/**
 * JSON-schema keywords that OpenAPI 3.0 (a JSON-schema draft-04 dialect) spells otherwise and
 * @fastify/swagger leaves as they are inside nested schemas: numeric exclusive bounds (ajv's, draft 6+)
 * become draft-04's boolean ones, an `examples` array its first `example`.
 */
function toOpenapi30(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) toOpenapi30(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof schema[exclusive] === 'number') {
      schema[bound] = schema[exclusive];
      schema[exclusive] = true;
    }
  }
  if (Array.isArray(schema.examples) && typeof schema.type === 'string') {
    if (schema.example === undefined) schema.example = schema.examples[0];
    delete schema.examples;
  }
  for (const value of Object.values(schema)) toOpenapi30(value);
}

type Operation = {
  requestBody?: { required?: boolean };
  /** Extension: the largest body in bytes the route reads; one byte more is refused with 413 41301. */
  'x-body-limit'?: number;
  responses: Record<string, { description?: string; content?: Record<string, unknown> }>;
};

/** Completes one operation from its route's schema and config. */
function completeOperation(operation: Operation, route: RouteOptions, bodyLimit: number): void {
  const config = route.config ?? {};
  const answers = config.answers;
  if (route.wsHandler) {
    // A WebSocket: what it refuses once open are close codes with a reason (routes/media.ts).
    delete operation.responses[200];
    operation.responses[101] = {
      description: 'Switching Protocols: the WebSocket is open (send Upgrade: websocket)',
    };
  } else if (answers) {
    const ok = operation.responses[200] ?? { description: 'Success' };
    ok.content = Object.fromEntries(answers.map((type) => [type, { schema: BINARY }]));
    operation.responses[200] = ok;
  }
  if (config.upload)
    operation.requestBody = uploadBody(config.upload, config.accepts ?? ['application/json']);
  // A route whose body schema admits no body (logout's) takes none: its only body is an empty one.
  const body = route.schema?.body as TSchema | undefined;
  if (body && OptionalKind in body) delete operation.requestBody;
  if (takesBody(route)) operation['x-body-limit'] = route.bodyLimit ?? bodyLimit;
  Object.assign(operation.responses, errorResponses(routeRefusals(route)));
}

/** The Fastify path of an OpenAPI path: /api/task/{task_id} is /api/task/:task_id. */
const fastifyPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

/** @fastify/swagger's options: the document's frame and the completion of every operation. */
export function openapiOptions(
  version: string,
  routes: ReadonlyMap<string, RouteOptions>,
  /** The body limit of a route that sets none. */
  bodyLimit: number,
): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Vision Console engine API',
        version,
        description:
          'Contract: service-interface.md with api-decisions.md. Every answer is {code, msg, data}; every refusal {code, msg} (the ErrorEnvelope schema), code a five-digit number whose first three digits are the HTTP status (docs/errors.md). A known path called with another method answers 405 40501 with an Allow header.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transformObject: (document) =>
      'openapiObject' in document
        ? completeDocument(document.openapiObject, routes, bodyLimit)
        : document.swaggerObject,
  };
}

type Document = { components?: { schemas?: object }; paths?: object };

/** The document with every operation completed from its route; a copy, the routes' schemas untouched. */
function completeDocument<T extends Document>(
  built: T,
  routes: ReadonlyMap<string, RouteOptions>,
  bodyLimit: number,
): T {
  const doc = structuredClone(built);
  const errorSchema = JSON.parse(JSON.stringify(ErrorEnvelope)) as object;
  doc.components = {
    ...doc.components,
    schemas: { ...doc.components?.schemas, [ERROR_SCHEMA]: errorSchema },
  };
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const route = routes.get(`${method.toUpperCase()} ${fastifyPath(path)}`);
      if (route) completeOperation(operation, route, bodyLimit);
    }
  }
  toOpenapi30(doc);
  return doc;
}

/** Collects the API's routes as they are registered, for the document to find each operation's route. */
export function collectRoutes(app: {
  addHook(name: 'onRoute', hook: (route: RouteOptions) => void): unknown;
}) {
  const routes = new Map<string, RouteOptions>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.set(`${method} ${route.url}`, route);
  });
  return routes;
}
