import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './helpers/browser';
import { ADMIN_PASSWORD, consoleFixture, startTestEngine, type TestEngine } from './helpers/engine';
import { type EngineProcess, spawnEngine, stopEngine } from './helpers/engine-process';

/**
 * DNS rebinding and cross-site requests: the engine answers only to its addresses, localhost and the
 * names its operator lists, and only to pages of its own origin or of allowed ones.
 */

interface RawAnswer {
  status: number;
  body: string;
}

/** A request with exactly these headers (fetch would not send a Host of our choosing). */
function raw(url: string, path: string, headers: Record<string, string>): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

const codeOf = (answer: RawAnswer) => (JSON.parse(answer.body) as { code: number }).code;

/** A web page on an origin of its own (another port), as a page elsewhere would call the engine. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end('<!doctype html><title>elsewhere</title>');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let t: TestEngine;
let port: number;
let allowedPage: { server: Server; origin: string };
let otherPage: { server: Server; origin: string };

beforeAll(async () => {
  allowedPage = await pageServer();
  otherPage = await pageServer();
  t = await startTestEngine(undefined, consoleFixture(), {
    allowedHosts: ['Vision-Box.lan'],
    allowedOrigins: ['app://console', allowedPage.origin],
  });
  port = t.engine.port;
});
afterAll(async () => {
  await t?.stop();
  allowedPage?.server.close();
  otherPage?.server.close();
});

describe('the Host header', () => {
  it('is accepted as an IP literal, localhost or a listed name, with or without a port', async () => {
    const auth = { authorization: `Bearer ${t.token}` };
    for (const host of [
      `127.0.0.1:${port}`,
      '127.0.0.1',
      `[::1]:${port}`,
      '[::1]',
      `localhost:${port}`,
      'LOCALHOST',
      'localhost.',
      '10.1.2.3:8080',
      `vision-box.lan:${port}`,
      'VISION-BOX.LAN',
    ]) {
      const answer = await raw(t.engine.url, '/api/tasks', { host, ...auth });
      expect({ host, status: answer.status }).toEqual({ host, status: 200 });
    }
  });

  it('refuses any other name with 403 40302 before anything else, on every kind of path', async () => {
    for (const host of [
      `attacker.example:${port}`,
      'attacker.example',
      '127.0.0.1.attacker.example',
      'localhost.attacker.example',
      `vision-box.lan.attacker.example:${port}`,
      '[::1',
      'a:b:c',
    ]) {
      for (const path of ['/api/health', '/api/tasks', '/api/nothing', '/', '/tasks']) {
        const answer = await raw(t.engine.url, path, { host, authorization: `Bearer ${t.token}` });
        expect({ host, path, status: answer.status, code: codeOf(answer) }).toEqual({
          host,
          path,
          status: 403,
          code: 40302,
        });
      }
    }
    // A token request under a rebound name is refused before the password is looked at.
    const login = await new Promise<RawAnswer>((resolve, reject) => {
      const body = JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD });
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/auth/token',
          setHost: false,
          headers: { host: 'attacker.example', 'content-type': 'application/json' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(codeOf(login)).toBe(40302);
  });

  it('refuses a request without Host, HTTP/1.0 or 1.1', async () => {
    for (const version of ['1.0', '1.1']) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(`GET /api/health HTTP/${version}\r\nConnection: close\r\n\r\n`),
        );
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer, version).toMatch(/^HTTP\/1\.1 403 /);
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toContain('"code":40302');
    }
  });
});

describe('the Origin header', () => {
  const host = () => `127.0.0.1:${port}`;

  it('accepts requests without Origin, from the engine own origin and from allowed origins', async () => {
    for (const origin of [undefined, `http://127.0.0.1:${port}`, 'app://console', 'APP://CONSOLE']) {
      const answer = await raw(t.engine.url, '/api/tasks', {
        host: host(),
        authorization: `Bearer ${t.token}`,
        ...(origin ? { origin } : {}),
      });
      expect({ origin, status: answer.status }).toEqual({ origin, status: 200 });
    }
  });

  it('refuses pages of other origins with 403 40303, open endpoints included', async () => {
    for (const origin of [
      'http://attacker.example',
      `http://localhost:${port}`,
      `http://127.0.0.1:${port + 1}`,
      'null',
      'file://',
    ]) {
      for (const path of ['/api/health', '/api/tasks']) {
        const answer = await raw(t.engine.url, path, {
          host: host(),
          origin,
          authorization: `Bearer ${t.token}`,
        });
        expect({ origin, path, status: answer.status, code: codeOf(answer) }).toEqual({
          origin,
          path,
          status: 403,
          code: 40303,
        });
      }
    }
  });
});

describe('CORS for allowed origins', () => {
  it('tells an allowed page elsewhere that it may read the answer, and nobody else', async () => {
    const headersFor = async (origin?: string) => {
      const answer = await fetch(`${t.engine.url}/api/health`, { headers: origin ? { origin } : {} });
      return { allow: answer.headers.get('access-control-allow-origin'), vary: answer.headers.get('vary') };
    };
    expect(await headersFor('app://console')).toEqual({ allow: 'app://console', vary: 'Origin' });
    // The engine's own pages need no CORS, and a request without Origin is no page's.
    expect(await headersFor(`http://127.0.0.1:${port}`)).toEqual({ allow: null, vary: null });
    expect(await headersFor()).toEqual({ allow: null, vary: null });
  });

  it('lets a browser page of an allowed origin read the engine, and keeps one of another origin out', async () => {
    const browser = await launchChromium();
    try {
      const read = async (pageOrigin: string) => {
        const page = await browser.newPage();
        await page.goto(`${pageOrigin}/`);
        const result = await page.evaluate(async (url) => {
          try {
            return ((await (await fetch(url)).json()) as { code: number }).code;
          } catch (error) {
            return String(error);
          }
        }, `${t.engine.url}/api/health`);
        await page.close();
        return result;
      };
      expect(await read(allowedPage.origin)).toBe(0);
      expect(await read(otherPage.origin)).toMatch(/TypeError/);
    } finally {
      await browser.close();
    }
  });
});

describe('allowed_hosts in <data-dir>/settings.json', () => {
  let engine: EngineProcess | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'vc-allowed-hosts-'));
  afterAll(async () => {
    await stopEngine(engine);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('adds the names the headless engine answers to', async () => {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ allowed_hosts: ['vision.plant.lan'] }));
    engine = await spawnEngine(dataDir, ADMIN_PASSWORD);
    expect((await raw(engine.url, '/api/health', { host: 'vision.plant.lan:8080' })).status).toBe(200);
    expect(codeOf(await raw(engine.url, '/api/health', { host: 'other.plant.lan' }))).toBe(40302);
  });
});
