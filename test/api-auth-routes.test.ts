import { Agent, request } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_PASSWORD, consoleFixture, startTestEngine, type TestEngine } from './helpers/engine';

/**
 * Authentication is decided by the route the router matched, never by the URL's text: every route the
 * engine registers (collected as Fastify registers them, not listed by hand) is called under every
 * spelling the router accepts for it, without a token and with a forged one.
 */

interface SeenRoute {
  method: string;
  url: string;
}

// Every route as it is registered, and which route each probe request reached, from hooks on the
// engine's own Fastify instance (added before any route or plugin exists).
const seen = vi.hoisted(() => ({ routes: [] as SeenRoute[], reached: new Map<string, string>() }));

vi.mock('fastify', async (importOriginal) => {
  const actual = await importOriginal<typeof import('fastify')>();
  const instrumented = ((options: Parameters<typeof actual.default>[0]) => {
    const app = actual.default(options) as unknown as FastifyInstance;
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) seen.routes.push({ method, url: route.url });
    });
    app.addHook('onRequest', async (req) => {
      const probe = req.headers['x-probe'];
      if (typeof probe === 'string' && req.routeOptions.url !== undefined)
        seen.reached.set(probe, `${req.method} ${req.routeOptions.url}`);
    });
    return app;
  }) as unknown as typeof actual.default;
  return { ...actual, default: instrumented };
});

/** The only routes anyone may call without a token: the API's open endpoints and the web console. */
const isPublic = ({ method, url }: SeenRoute) =>
  !url.startsWith('/api') ||
  (url === '/api/health' && (method === 'GET' || method === 'HEAD')) ||
  (url === '/api/auth/token' && method === 'POST');

const NEW_PASSWORD = 'x-Owned-9';
const FORGED = 'A'.repeat(43);
const SAMPLE_PARAM = '00000000-0000-4000-8000-000000000000';

let t: TestEngine;
const agent = new Agent({ keepAlive: true, maxSockets: 8 });

beforeAll(async () => {
  t = await startTestEngine(undefined, consoleFixture());
});
afterAll(async () => {
  agent.destroy();
  await t?.stop();
});

/** A route pattern with sample values for its parameters (and its wildcard). */
const concrete = (url: string) => url.replace(/:[A-Za-z_]+/g, SAMPLE_PARAM).replace(/\*$/, 'x');

const hex = (char: string) => char.charCodeAt(0).toString(16).padStart(2, '0');

/**
 * Spellings of a path that find-my-way may resolve to the same route: each character percent-encoded
 * (upper- and lower-case hex), everything encoded, trailing slash, ';' and '#' suffixes, query
 * strings, duplicate slashes, dot segments, upper case, double encoding and the absolute form.
 */
function spellings(path: string, origin: string): string[] {
  const out = new Set<string>([path]);
  const encodeAll = (upper: boolean) =>
    [...path].map((c) => `%${upper ? hex(c).toUpperCase() : hex(c)}`).join('');
  for (let i = 0; i < path.length; i++) {
    const code = hex(path.charAt(i));
    for (const digits of [code, code.toUpperCase()])
      out.add(`${path.slice(0, i)}%${digits}${path.slice(i + 1)}`);
  }
  const first = path.indexOf('a');
  if (first >= 0) out.add(`${path.slice(0, first)}%2561${path.slice(first + 1)}`);
  out.add(encodeAll(true));
  out.add(encodeAll(false));
  const variants = [
    `${path}/`,
    `${path}?x=1`,
    `${path}/?x=1`,
    `${path}?token=${FORGED}`,
    `${path};x=1`,
    `${path}#x`,
    `${path}?`,
    `/${path}`,
    path.replace('/api/', '/api//'),
    path.replace('/api/', '/api/./'),
    `/x/..${path}`,
    path.toUpperCase(),
    `${origin}${path}`,
    `${origin}${path}/?x=1`,
    `http://attacker.example${path}`,
    `%2F${path.slice(1)}`,
    path.replace(/^\/api/, '/%61pi'),
    path.replace(/^\/api/, '/a%70i'),
    path.replace(/^\/api/, '/%41PI'),
  ];
  for (const variant of variants) out.add(variant);
  return [...out];
}

interface Probe {
  method: string;
  target: string;
  authorization?: string;
}

interface ProbeAnswer {
  status: number;
  body: string;
  /** The route the router matched, as "METHOD /pattern", or undefined when none did. */
  reached?: string;
}

let probeId = 0;

/** Sends one request exactly as spelled (no client-side normalisation), with a JSON body for writes. */
function send(port: number, probe: Probe): Promise<ProbeAnswer> {
  const id = String(++probeId);
  const body = ['POST', 'PUT', 'PATCH'].includes(probe.method)
    ? JSON.stringify({ current_password: ADMIN_PASSWORD, password: NEW_PASSWORD })
    : undefined;
  return new Promise((resolve) => {
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: probe.method,
        path: probe.target,
        headers: {
          'x-probe': id,
          ...(probe.authorization ? { authorization: probe.authorization } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
        // A route reached without authentication may never answer (the SSE feed): that is a finding too.
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            reached: seen.reached.get(id),
          }),
        );
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve({ status: 0, body: 'no answer within 10 s', reached: seen.reached.get(id) });
    });
    req.on('error', (error) =>
      resolve({ status: -1, body: `${error.message}`, reached: seen.reached.get(id) }),
    );
    req.end(body);
  });
}

/** The envelope's code of an answer, or undefined when the body is no envelope. */
function codeOf(body: string): number | undefined {
  try {
    return (JSON.parse(body) as { code?: number }).code;
  } catch {
    return undefined;
  }
}

async function inBatches<T, R>(items: readonly T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size)
    results.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return results;
}

describe('authentication follows the matched route', () => {
  it('collected every route the engine registers, each with its method', () => {
    const names = new Set(seen.routes.map((r) => `${r.method} ${r.url}`));
    // A few known routes prove the collection works; the test below covers whatever is registered.
    for (const known of [
      'GET /api/tasks',
      'HEAD /api/tasks',
      'PUT /api/auth/password',
      'POST /api/zapk',
      'GET /api/events/stream',
    ])
      expect(names).toContain(known);
    expect(seen.routes.filter((r) => !isPublic(r)).length).toBeGreaterThan(30);
  });

  it('answers 401 to every spelling that reaches a non-public route, and changes nothing', async () => {
    const port = t.engine.port;
    const origin = `http://127.0.0.1:${port}`;
    const tasksBefore = (await t.call('GET', '/api/tasks')).body.data;
    const packagesBefore = (await t.call('GET', '/api/zapk')).body.data;

    const unique = [...new Map(seen.routes.map((r) => [`${r.method} ${r.url}`, r])).values()];
    const probes: Probe[] = unique.flatMap((route) =>
      spellings(concrete(route.url), origin).flatMap((target) => [
        { method: route.method, target },
        { method: route.method, target, authorization: `Bearer ${FORGED}` },
      ]),
    );
    const answers = await inBatches(probes, 8, async (probe) => ({ probe, answer: await send(port, probe) }));

    const failures: string[] = [];
    const reachedPerRoute = new Map<string, number>();
    for (const { probe, answer } of answers) {
      if (!answer.reached) continue;
      const [method = '', url = ''] = answer.reached.split(' ');
      if (isPublic({ method, url })) continue;
      reachedPerRoute.set(answer.reached, (reachedPerRoute.get(answer.reached) ?? 0) + 1);
      // A forged ?token= is refused as invalid (40102) where the route takes one, else as missing.
      const expected = probe.authorization
        ? [40102]
        : probe.target.includes('token=')
          ? [40101, 40102]
          : [40101];
      const code = method === 'HEAD' ? expected[0] : codeOf(answer.body);
      if (answer.status !== 401 || !expected.includes(code ?? 0))
        failures.push(
          `${probe.method} ${probe.target}${probe.authorization ? ' (forged token)' : ''} reached ${answer.reached}: ${answer.status} ${answer.body.slice(0, 80)}`,
        );
    }
    expect(failures).toEqual([]);

    // Not vacuous: every non-public route was reached, under many spellings each.
    const nonPublic = unique.filter((r) => !isPublic(r)).map((r) => `${r.method} ${r.url}`);
    for (const route of nonPublic) expect(reachedPerRoute.get(route) ?? 0, route).toBeGreaterThanOrEqual(20);
    const total = [...reachedPerRoute.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(nonPublic.length * 40);

    // Nothing changed: the password PUT under every spelling left the old password in place.
    const login = async (password: string) =>
      (await t.call('POST', '/api/auth/token', { token: null, json: { username: 'admin', password } })).body
        .code;
    expect(await login(ADMIN_PASSWORD)).toBe(0);
    expect(await login(NEW_PASSWORD)).toBe(40103);
    expect((await t.call('GET', '/api/tasks')).body.data).toEqual(tasksBefore);
    expect((await t.call('GET', '/api/zapk')).body.data).toEqual(packagesBefore);
  }, 300_000);
});

describe('the Authorization header', () => {
  it('takes the Bearer scheme in any case (RFC 7235), and nothing else', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const answer = await t.call('GET', '/api/tasks', {
        token: null,
        headers: { authorization: `${scheme} ${t.token}` },
      });
      expect(answer.status, scheme).toBe(200);
    }
    expect(
      (await t.call('GET', '/api/tasks', { token: null, headers: { authorization: `Bearer  ${t.token}` } }))
        .status,
    ).toBe(200);
    for (const header of [`Basic ${t.token}`, `Bearer${t.token}`, 'Bearer', `Token ${t.token}`]) {
      const answer = await t.call('GET', '/api/tasks', { token: null, headers: { authorization: header } });
      expect({ header, code: answer.body.code }).toEqual({ header, code: 40101 });
    }
  });
});

describe('paths the router refuses', () => {
  it('are answered in the envelope: broken percent-encoding, an overlong id', async () => {
    for (const target of ['/api/%zz', '/api/task/%E0%A4%A', '/%zz']) {
      const answer = await send(t.engine.port, { method: 'GET', target, authorization: `Bearer ${t.token}` });
      expect({ target, status: answer.status, code: codeOf(answer.body) }).toEqual({
        target,
        status: 400,
        code: 40001,
      });
    }
    const long = `/api/task/${'a'.repeat(200)}`;
    const refused = await send(t.engine.port, {
      method: 'GET',
      target: long,
      authorization: `Bearer ${t.token}`,
    });
    expect([refused.status, codeOf(refused.body)]).toEqual([400, 40001]);
    expect(JSON.parse(refused.body).msg).toMatch(/longer than the 100 characters/);
    const unauthenticated = await send(t.engine.port, { method: 'GET', target: long });
    expect([unauthenticated.status, codeOf(unauthenticated.body)]).toEqual([401, 40101]);
  });
});

describe('sign out (POST /api/auth/logout, extension)', () => {
  it('revokes the token it presents and no other', async () => {
    const signIn = async () =>
      (
        await t.call('POST', '/api/auth/token', {
          token: null,
          json: { username: 'admin', password: ADMIN_PASSWORD },
        })
      ).body.data as { access_token: string };
    const leaving = (await signIn()).access_token;
    const staying = (await signIn()).access_token;
    expect((await t.call('GET', '/api/tasks', { token: leaving })).status).toBe(200);

    const out = await t.call('POST', '/api/auth/logout', { token: leaving });
    expect([out.status, out.body]).toEqual([200, { code: 0, msg: 'success', data: { username: 'admin' } }]);

    const after = await t.call('GET', '/api/tasks', { token: leaving });
    expect([after.status, after.body.code]).toEqual([401, 40102]);
    expect((await t.call('POST', '/api/auth/logout', { token: leaving })).status).toBe(401);
    expect((await t.call('GET', '/api/tasks', { token: staying })).status).toBe(200);
    expect((await t.call('POST', '/api/auth/logout', { token: null })).body.code).toBe(40101);
  });
});
