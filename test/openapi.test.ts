import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JSON_BODY_LIMIT } from '../engine/api/app';
import { MAX_PARAM_LENGTH } from '../engine/api/schemas';
import { ERRORS } from '../engine/contract/errors';
import { FIXTURES, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';

/**
 * The OpenAPI document against the engine it describes: valid OpenAPI 3.0.3 (checked by a real
 * validator), one error envelope, and, walking every route the engine registers (collected as
 * Fastify registers them, not listed by hand), every status, media type and path constraint the
 * engine really answers with declared for the operation that answered. Each answer is recorded by a
 * hook on the engine's own Fastify instance with the route that matched it.
 */

interface Seen {
  method: string;
  route: string;
  status: number;
  type: string;
}

const seen = vi.hoisted(() => ({ routes: [] as RouteOptions[], answers: [] as Seen[] }));

vi.mock('fastify', async (importOriginal) => {
  const actual = await importOriginal<typeof import('fastify')>();
  const instrumented = ((options: Parameters<typeof actual.default>[0]) => {
    const app = actual.default(options) as unknown as FastifyInstance;
    app.addHook('onRoute', (route) => {
      seen.routes.push(route);
    });
    app.addHook('onResponse', async (req, reply) => {
      seen.answers.push({
        method: req.method,
        route: req.routeOptions.url ?? '(none)',
        status: reply.statusCode,
        type: String(reply.getHeader('content-type') ?? '').split(';')[0] ?? '',
      });
    });
    return app;
  }) as unknown as typeof actual.default;
  return { ...actual, default: instrumented };
});

interface DocResponse {
  description: string;
  content?: Record<string, { schema: Record<string, unknown> }>;
}
interface Operation {
  'x-body-limit'?: number;
  parameters?: { in: string; name: string; schema: { maxLength?: number; pattern?: string } }[];
  requestBody?: { required?: boolean; content: Record<string, unknown> };
  responses: Record<string, DocResponse>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

interface Answer {
  status: number;
  type: string;
  allow: string | undefined;
  text: string;
}

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
/** Media types a body of each kind is sent with. */
const SOME_TEXT = { type: 'text/plain', body: 'hello' };

let t: TestEngine;
let doc: Document;

/** Any method, any body, the answer as it came (binary answers too). */
function send(
  method: string,
  path: string,
  options: { token?: string | null; type?: string; body?: string | Buffer } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? t.token : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.type) headers['content-type'] = options.type;
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(`${t.engine.url}${path}`, { method, headers, agent: false }, (res) => {
      answered = true;
      const answer = (text: string) =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type'] ?? '').split(';')[0] ?? '',
          allow: res.headers.allow,
          text,
        });
      // A feed never ends: its head is the answer.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        answer('');
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => answer(Buffer.concat(chunks).toString('latin1')));
      res.on('error', reject);
    });
    // A refusal may come, and the connection close, before all of a large body is written.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path} did not answer`)));
    req.end(options.body);
  });
}

const openapiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');

/** The API's operations as the engine registered them (HEAD is GET's twin, the hidden ones aside). */
const operations = () =>
  seen.routes
    .filter((route) => route.url.startsWith('/api') && !route.schema?.hide)
    .flatMap((route) => [route.method].flat().map((method) => ({ method, route })))
    .filter(({ method }) => method !== 'HEAD');

const operationOf = (method: string, url: string) => doc.paths[openapiPath(url)]?.[method.toLowerCase()];

/** A route's path with a value for each parameter (a real one where given). */
function concrete(url: string, values: Record<string, string> = {}): string {
  return url.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const given = values[name];
    if (given !== undefined) return encodeURIComponent(given);
    if (name === 'file') return 'index.m3u8';
    if (name === 'sample_id') return '1';
    return UNKNOWN_ID;
  });
}

const takesJson = (route: RouteOptions) =>
  (route.config?.accepts ?? ['application/json']).includes('application/json');

beforeAll(async () => {
  t = await startTestEngine();
  const answer = await send('GET', '/api/openapi.json');
  expect(answer.status).toBe(200);
  doc = JSON.parse(answer.text) as Document;
});
afterAll(async () => t?.stop());

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.0.3', async () => {
    expect(doc.openapi).toBe('3.0.3');
    // The validator dereferences in place: it gets a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('declares every route the engine registers, and only those', () => {
    const hidden = seen.routes.filter((route) => route.url.startsWith('/api') && route.schema?.hide);
    // The document itself and the catch-alls that answer 404/405 for the rest of /api.
    expect([...new Set(hidden.map((route) => route.url))].sort()).toEqual([
      '/api',
      '/api/*',
      '/api/openapi.json',
    ]);
    const registered = operations().map(
      ({ method, route }) => `${method.toLowerCase()} ${openapiPath(route.url)}`,
    );
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    expect(documented.sort()).toEqual([...new Set(registered)].sort());
    expect(registered.length).toBeGreaterThanOrEqual(49);
  });

  it('has one error envelope, {code, msg}, that every refusal of every operation references', () => {
    const envelope = doc.components.schemas.ErrorEnvelope;
    expect(envelope).toMatchObject({
      type: 'object',
      required: ['code', 'msg'],
      properties: { code: { type: 'integer' }, msg: { type: 'string' } },
    });
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const statuses = Object.keys(operation.responses);
        const errors = statuses.filter((status) => Number(status) >= 400);
        for (const status of errors) {
          expect(operation.responses[status]?.content, `${method} ${path} ${status}`).toEqual({
            'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } },
          });
        }
        // What every operation can meet: a bad parameter, a foreign Host, an engine fault.
        for (const status of ['400', '403', '500']) expect(errors, `${method} ${path}`).toContain(status);
        expect(
          statuses.some((status) => Number(status) < 300),
          `${method} ${path}`,
        ).toBe(true);
      }
    }
  });

  it('types the envelope code and the app type as integers', () => {
    const listing = doc.paths['/api/zapk']?.get?.responses['200']?.content?.['application/json']?.schema as {
      properties: Record<string, { type?: string; items?: { properties: Record<string, unknown> } }>;
    };
    expect(listing.properties.code?.type).toBe('integer');
    const apps = listing.properties.data?.items?.properties.apps as {
      additionalProperties: { properties: { type: { type: string } } };
    };
    expect(apps.additionalProperties.properties.type.type).toBe('integer');
  });

  it('declares the bodies of the uploads, and none for logout', () => {
    const body = (path: string) => doc.paths[path]?.post?.requestBody;
    expect(Object.keys(body('/api/task/{task_id}/image')?.content ?? {}).sort()).toEqual([
      'application/json',
      'image/bmp',
      'image/jpeg',
      'image/png',
      'image/webp',
      'multipart/form-data',
    ]);
    expect(body('/api/task/{task_id}/diff_image')?.content['multipart/form-data']).toEqual({
      schema: {
        type: 'object',
        required: ['image_b'],
        properties: {
          image_b: { type: 'string', format: 'binary' },
          image_a: { type: 'string', format: 'binary' },
        },
        additionalProperties: false,
      },
    });
    expect(body('/api/zapk')).toMatchObject({ required: true, content: { 'multipart/form-data': {} } });
    expect(body('/api/auth/logout')).toBeUndefined();
    // Every route that reads a body declares one.
    for (const { method, route } of operations()) {
      if (!route.config?.upload && !route.schema?.body) continue;
      if (route.url === '/api/auth/logout') continue;
      expect(operationOf(method, route.url)?.requestBody?.required, `${method} ${route.url}`).toBe(true);
    }
  });

  it('declares each path id as long as the router lets one be, and the engine refuses one longer', async () => {
    for (const { method, route } of operations()) {
      const params = (operationOf(method, route.url)?.parameters ?? []).filter((p) => p.in === 'path');
      expect(params.length, `${method} ${route.url}`).toBe((route.url.match(/:/g) ?? []).length);
      for (const param of params) {
        // A pattern bounds file names and sample ids well inside the router's limit.
        if (param.schema.pattern) continue;
        expect(param.schema.maxLength, `${method} ${route.url} ${param.name}`).toBe(MAX_PARAM_LENGTH);
        const longest = concrete(route.url, { [param.name]: 'a'.repeat(MAX_PARAM_LENGTH) });
        const tooLong = concrete(route.url, { [param.name]: 'a'.repeat(MAX_PARAM_LENGTH + 1) });
        const fits = await send(method, longest, { type: 'application/json', body: '{}' });
        expect(fits.text, `${method} ${longest}`).not.toMatch(/longer than|must NOT have more/);
        const refused = await send(method, tooLong, { type: 'application/json', body: '{}' });
        expect(
          { status: refused.status, code: JSON.parse(refused.text).code },
          `${method} ${tooLong}`,
        ).toEqual({
          status: 400,
          code: ERRORS.INVALID_PARAMETER.code,
        });
      }
    }
  });
});

describe('walking every route', () => {
  it('answers a wrong method 405 with Allow, before any check of its body or type', async () => {
    const byPath = new Map<string, Set<string>>();
    for (const route of seen.routes.filter((r) => r.url.startsWith('/api/') && !r.url.endsWith('*'))) {
      const methods = byPath.get(route.url) ?? new Set<string>();
      for (const method of [route.method].flat()) methods.add(method);
      byPath.set(route.url, methods);
    }
    const tried = [
      'GET',
      'POST',
      'PUT',
      'DELETE',
      'PATCH',
      'OPTIONS',
      'TRACE',
      'QUERY',
      'PROPFIND',
      'M-SEARCH',
    ];
    for (const [url, allowed] of byPath) {
      const path = concrete(url);
      for (const method of tried.filter((m) => !allowed.has(m))) {
        const bodies =
          method === 'GET' || method === 'TRACE'
            ? [{}]
            : [{}, SOME_TEXT, { type: 'application/json', body: '{"a":' }];
        for (const body of bodies) {
          const answer = await send(method, path, body);
          expect({ status: answer.status, code: JSON.parse(answer.text).code }, `${method} ${path}`).toEqual({
            status: 405,
            code: ERRORS.METHOD_NOT_ALLOWED.code,
          });
          expect(answer.allow?.split(', ').sort(), `${method} ${path}`).toEqual([...allowed].sort());
        }
      }
    }
  });

  it('refuses a body with a "__proto__" key as a field, not as broken JSON', async () => {
    const poisoned = '{"__proto__": {"polluted": true}, "name": "x"}';
    for (const { method, route } of operations()) {
      if (method === 'GET' || !takesJson(route)) continue;
      const answer = await send(method, concrete(route.url), { type: 'application/json', body: poisoned });
      const body = JSON.parse(answer.text);
      expect({ status: answer.status, code: body.code }, `${method} ${route.url}`).toEqual({
        status: 400,
        code: ERRORS.INVALID_PARAMETER.code,
      });
      expect(body.msg).toMatch(/__proto__/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });

  it('provokes each route’s refusals and finds every status it answers declared for it', async () => {
    // Real resources, so that domain refusals and success answers happen: tasks of each mode on the
    // built-in package (no model to load), a preview and an AI video of a real clip.
    const start = async (body: object) => {
      const answer = await send('POST', '/api/task', {
        type: 'application/json',
        body: JSON.stringify(body),
      });
      expect(answer.status, answer.text).toBe(200);
      return (JSON.parse(answer.text) as { data: { task_id: string } }).data.task_id;
    };
    const video = await start({ zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO });
    const image = await start({ mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] });
    const diff = await start({ mode: 'diff', zapk_id: 'builtin', app_ids: ['change'] });
    const closed = await start({ mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] });
    expect((await send('DELETE', `/api/task/${closed}`)).status).toBe(200);
    const png = readFileSync(join(FIXTURES, 'media', 'basketball1.png'));
    const jpeg = readFileSync(join(FIXTURES, 'media', 'leuvenB.jpg'));

    // Every route without a token, with unknown ids, with the wrong and broken bodies, too large ones.
    for (const { method, route } of operations()) {
      const path = concrete(route.url);
      if (!route.config?.public) expect((await send(method, path, { token: null })).status, path).toBe(401);
      await send(method, path, method === 'GET' ? {} : { type: 'application/json', body: '{}' });
      if (method === 'GET') continue;
      // DELETE reads no body: what it is sent is not checked against a type (but still parsed).
      const typed = await send(method, path, SOME_TEXT);
      if (method !== 'DELETE') expect(typed.status, `${method} ${path}`).toBe(415);
      if (takesJson(route)) {
        const broken = await send(method, path, { type: 'application/json', body: '{"a":' });
        expect(JSON.parse(broken.text).code, `${method} ${path}`).toBe(ERRORS.MALFORMED_JSON.code);
      }
      // The largest body the document declares is read (and found not JSON), one byte more refused.
      const limit = operationOf(method, route.url)?.['x-body-limit'];
      expect(limit, `${method} ${path}`).toBe(route.bodyLimit ?? JSON_BODY_LIMIT);
      // The package upload's 1 GiB is no size to send in a test; every other limit is.
      if (limit !== undefined && limit <= 64 * 1024 * 1024) {
        const type = takesJson(route) ? 'application/json' : String(route.config?.accepts?.[0]);
        const fits = await send(method, path, { type, body: Buffer.alloc(limit, 0x20) });
        expect(fits.status, `${method} ${path}`).not.toBe(413);
        const huge = await send(method, path, { type, body: Buffer.alloc(limit + 1, 0x20) });
        expect(huge.status, `${method} ${path}`).toBe(413);
      }
    }

    // The same routes on resources that exist: of the wrong mode, closed, busy, with bad content.
    const onTasks = operations().filter(({ route }) => route.url.startsWith('/api/task/:task_id'));
    for (const task of [video, image, diff, closed]) {
      for (const { method, route } of onTasks) {
        if (method === 'DELETE' && route.url === '/api/task/:task_id') continue;
        const path = concrete(route.url, { task_id: task });
        await send(method, path, { type: 'application/json', body: '{}' });
      }
    }
    await send('POST', `/api/task/${image}/image`, { type: 'image/png', body: png });
    await send('POST', `/api/task/${image}/image`, { type: 'image/png', body: png });
    await send('POST', `/api/task/${image}/image`, {
      type: 'image/jpeg',
      body: Buffer.from('not a picture'),
    });
    await send('POST', `/api/task/${diff}/diff_image`, {
      type: 'application/json',
      body: JSON.stringify({ image_b: jpeg.toString('base64') }),
    });
    await send('DELETE', `/api/task/${image}?purge=true`);
    await send('PUT', `/api/task/${closed}`, { type: 'application/json', body: '{"app_ids":["motion"]}' });
    await send('DELETE', '/api/zapk/builtin');
    await send('POST', '/api/zapk/builtin/restore');
    await send('POST', '/api/auth/token', {
      token: null,
      type: 'application/json',
      body: '{"username":"admin","password":"wrong"}',
    });
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('not a zip')]), 'bad.zapk');
    const multipart = new Response(form);
    await send('POST', '/api/zapk', {
      type: multipart.headers.get('content-type') ?? '',
      body: Buffer.from(await multipart.arrayBuffer()),
    });

    const json = (body: unknown) => ({ type: 'application/json', body: JSON.stringify(body) });
    await send('POST', '/api/task', json({ zapk_id: 'nothing', app_ids: ['motion'], mode: 'image' }));
    await send('POST', '/api/task', json({ zapk_id: 'builtin', app_ids: ['change'], mode: 'image' }));
    await send('PUT', '/api/zapk/builtin/app/motion', json({ name: 'Motion' }));
    await send('PUT', '/api/zapk/builtin/app/nothing', json({ name: 'Motion' }));
    await send('POST', '/api/auth/link', json({ paths: [`/api/task/${video}/snapshot`] }));
    await send('POST', '/api/auth/logout', { token: t.engine.issueToken().access_token });
    await send('PUT', '/api/alarms/review', json({ event_ids: [UNKNOWN_ID], reviewed: true }));
    await send('PUT', '/api/settings/mqtt', json({ enabled: false }));
    // An optimization run, its reads and its dataset (a zip).
    const run = await send(
      'POST',
      `/api/task/${video}/optimization`,
      json({ app_ids: ['motion'], duration: 10 }),
    );
    expect(run.status, run.text).toBe(200);
    await send('POST', `/api/task/${video}/optimization`, json({ app_ids: ['motion'], duration: 10 }));
    const { optimization_id } = (JSON.parse(run.text) as { data: { optimization_id: string } }).data;
    for (const { method, route } of operations().filter(({ route }) =>
      route.url.includes(':optimization_id'),
    )) {
      const path = concrete(route.url, { task_id: video, optimization_id });
      await send(method, path, method === 'GET' ? {} : json({ verdict: 'right' }));
    }
    // An AI video: its playlist once it has one, then closed.
    const ailive = await send('POST', `/api/task/${video}/ailive`, json({ app_ids: ['motion'] }));
    if (ailive.status === 200) {
      const { stream } = (JSON.parse(ailive.text) as { data: { stream: string } }).data;
      const playlist = `/api/task/${video}/livestream/${stream}/index.m3u8`;
      for (let tries = 0; (await send('GET', playlist)).status !== 200 && tries < 40; tries++)
        await new Promise((resolve) => setTimeout(resolve, 500));
      await send('DELETE', `/api/task/${video}/livestream/${stream}`);
    }

    // Success answers that are not JSON: a JPEG, a PNG, HLS, the event feed (which the recorder does
    // not see: its answer is taken over from Fastify).
    for (let tries = 0; (await send('GET', `/api/task/${video}/snapshot`)).status !== 200; tries++) {
      expect(tries, 'the video task gave no snapshot').toBeLessThan(60);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await send('GET', `/api/task/${video}/heatmap`);
    expect((await send('GET', '/api/events/stream')).type).toBe('text/event-stream');
    const preview = await send('POST', '/api/stream', {
      type: 'application/json',
      body: JSON.stringify({ video_url: VIDEO }),
    });
    if (preview.status === 200) {
      const { stream_id } = (JSON.parse(preview.text) as { data: { stream_id: string } }).data;
      await send('GET', `/api/stream/${stream_id}/index.m3u8`);
      await send('DELETE', `/api/stream/${stream_id}`);
    }

    // Every answer of a documented operation is declared for it, with its media type.
    const undeclared: string[] = [];
    const ofOperations = seen.answers.filter((answer) => operationOf(answer.method, answer.route));
    for (const answer of ofOperations) {
      const response = operationOf(answer.method, answer.route)?.responses[answer.status];
      const what = `${answer.method} ${answer.route} ${answer.status} ${answer.type}`;
      if (!response) undeclared.push(`${what}: status`);
      else if (answer.type && !Object.keys(response.content ?? {}).includes(answer.type))
        undeclared.push(`${what}: media type (declared ${Object.keys(response.content ?? {}).join(', ')})`);
    }
    expect([...new Set(undeclared)]).toEqual([]);
    expect(Object.keys(operationOf('GET', '/api/events/stream')?.responses['200']?.content ?? {})).toEqual([
      'text/event-stream',
    ]);
    // The walk met every operation, and far more than its success answers.
    const met = new Set(ofOperations.map((answer) => `${answer.method} ${answer.route}`));
    expect(operations().filter(({ method, route }) => !met.has(`${method} ${route.url}`))).toEqual([]);
    const statuses = new Set(ofOperations.map((answer) => answer.status));
    for (const status of [200, 400, 401, 404, 409, 413, 415, 422, 429])
      expect([...statuses]).toContain(status);
    expect([...new Set(ofOperations.map((answer) => answer.type))]).toEqual(
      expect.arrayContaining(['application/json', 'image/jpeg', 'image/png', 'application/zip']),
    );
  }, 180_000);
});
