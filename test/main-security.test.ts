import { readFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCsp, engineSource, securityHeaders } from '../engine/contract/csp';
import {
  APP_ORIGIN,
  contentTypeFor,
  isAllowedNavigation,
  isAllowedRequest,
  isEngineExport,
  originOf,
  resolveAppAsset,
  withEngineAuthorization,
} from '../main/security';

/** "name source source; name source" -> Map(name -> sources). */
function parseCsp(csp: string): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of csp.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) directives.set(name, sources);
  }
  return directives;
}

describe('buildCsp', () => {
  const engineUrl = 'http://127.0.0.1:43123';
  const csp = parseCsp(buildCsp({ engineUrl }));

  it('locks everything to the app itself', () => {
    expect(csp.get('default-src')).toEqual(["'self'"]);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(csp.get('style-src')).toEqual(["'self'"]);
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp.get('frame-src')).toEqual(["'none'"]);
  });

  it('admits the engine origin for API/HLS traffic, media and images, nothing else remote', () => {
    expect(csp.get('connect-src')).toEqual(["'self'", engineUrl, engineUrl.replace('http:', 'ws:')]);
    expect(csp.get('media-src')).toEqual(["'self'", 'blob:', engineUrl]);
    expect(csp.get('img-src')).toEqual(["'self'", 'data:', 'blob:', engineUrl]);
    const all = buildCsp({ engineUrl });
    expect(all).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:\/\/(?!127\.0\.0\.1:43123)/);
  });

  it('reduces the engine URL to its origin and refuses anything that could inject sources', () => {
    expect(engineSource('http://127.0.0.1:8080/api/health?x=1')).toBe('http://127.0.0.1:8080');
    expect(() => buildCsp({ engineUrl: "http://127.0.0.1:1; script-src 'unsafe-inline'" })).toThrow();
    expect(() => buildCsp({ engineUrl: 'javascript:alert(1)' })).toThrow();
    expect(() => buildCsp({ engineUrl: 'http://user:pw@127.0.0.1:1' })).toThrow();
    expect(() => buildCsp({ engineUrl: 'not a url' })).toThrow();
  });

  it('relaxes inline scripts and styles only for the dev server', () => {
    const dev = parseCsp(buildCsp({ engineUrl, dev: true }));
    expect(dev.get('script-src')).toEqual(["'self'", "'unsafe-inline'"]);
    expect(dev.get('style-src')).toEqual(["'self'", "'unsafe-inline'"]);
    expect(dev.get('object-src')).toEqual(["'none'"]);
  });

  it('meta variant: no frame-ancestors (ignored in meta), any loopback port for the engine', () => {
    const meta = parseCsp(buildCsp({ meta: true }));
    expect(meta.has('frame-ancestors')).toBe(false);
    expect(meta.get('connect-src')).toEqual(["'self'", 'http://127.0.0.1:*', 'ws://127.0.0.1:*']);
    expect(meta.get('script-src')).toEqual(["'self'"]);
  });

  it('renderer/index.html carries exactly the meta policy', () => {
    const html = readFileSync(join(import.meta.dirname, '../renderer/index.html'), 'utf8');
    const match = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)"/);
    expect(match?.[1]).toBe(buildCsp({ meta: true }));
  });

  it('security headers carry the CSP and nosniff', () => {
    const headers = securityHeaders('default-src x');
    expect(headers['Content-Security-Policy']).toBe('default-src x');
    expect(headers['X-Content-Type-Options']).toBe('nosniff');
  });
});

describe('navigation', () => {
  it('allows the app origin only', () => {
    expect(isAllowedNavigation('app://console/index.html', APP_ORIGIN)).toBe(true);
    expect(isAllowedNavigation('app://console/', APP_ORIGIN)).toBe(true);
    expect(isAllowedNavigation('APP://CONSOLE/index.html#tasks', APP_ORIGIN)).toBe(true);
  });

  it('denies everything else', () => {
    for (const url of [
      'https://example.com/',
      'http://127.0.0.1:8080/',
      'app://other/index.html',
      'app://console.evil.example/',
      'app://user@console/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'about:blank',
      'blob:app://console/1234',
      '',
      'not a url',
    ]) {
      expect(isAllowedNavigation(url, APP_ORIGIN), url).toBe(false);
    }
  });

  it('compares scheme, host and port of the dev server', () => {
    expect(isAllowedNavigation('http://localhost:5173/', 'http://localhost:5173')).toBe(true);
    expect(isAllowedNavigation('http://localhost:5174/', 'http://localhost:5173')).toBe(false);
    expect(isAllowedNavigation('https://localhost:5173/', 'http://localhost:5173')).toBe(false);
  });

  it('originOf has no origin for file, data and opaque URLs', () => {
    expect(originOf('app://console/x')).toBe('app://console');
    expect(originOf('file:///x')).toBeNull();
    expect(originOf('data:,x')).toBeNull();
  });
});

describe('request filter', () => {
  const allowed = [APP_ORIGIN, 'http://127.0.0.1:43123'];

  it('lets the app, the engine and in-memory content through', () => {
    expect(isAllowedRequest('app://console/assets/index.js', allowed)).toBe(true);
    expect(isAllowedRequest('http://127.0.0.1:43123/api/hls/x.m3u8', allowed)).toBe(true);
    expect(isAllowedRequest('data:image/png;base64,AAAA', allowed)).toBe(true);
    expect(isAllowedRequest('blob:app://console/4b1e', allowed)).toBe(true);
  });

  it('cancels remote content and other local ports', () => {
    expect(isAllowedRequest('https://cdn.example.com/lib.js', allowed)).toBe(false);
    expect(isAllowedRequest('http://127.0.0.1:8080/api/zapk', allowed)).toBe(false);
    expect(isAllowedRequest('file:///etc/passwd', allowed)).toBe(false);
    expect(isAllowedRequest('ws://127.0.0.1:43123/', allowed)).toBe(false);
  });
});

describe('app:// asset mapping', () => {
  const root = resolve('/srv/console');

  it('maps paths inside the renderer folder, "/" to index.html', () => {
    expect(resolveAppAsset(root, 'app://console/')).toBe(join(root, 'index.html'));
    expect(resolveAppAsset(root, 'app://console/index.html?x=1#y')).toBe(join(root, 'index.html'));
    expect(resolveAppAsset(root, 'app://console/assets/index-abc.js')).toBe(
      join(root, 'assets', 'index-abc.js'),
    );
  });

  it('never leaves the folder and ignores foreign origins', () => {
    for (const url of [
      'app://console/assets/..%2f..%2fsecret',
      'app://console/assets%5c..%5c..%5csecret',
      'app://console/index.html%00.js',
      'app://console/%E0%A4%A',
      'app://console/C:/Windows/win.ini',
      'app://other/index.html',
      'https://console/index.html',
    ]) {
      expect(resolveAppAsset(root, url), url).toBeNull();
    }
    // The URL parser already folds literal and %2e dot segments: the result stays inside the root.
    for (const url of ['app://console/../../etc/passwd', 'app://console/%2e%2e/%2e%2e/etc/passwd']) {
      expect(resolveAppAsset(root, url)?.startsWith(root + sep), url).toBe(true);
    }
  });

  it('content types', () => {
    expect(contentTypeFor('a/index.html')).toMatch(/^text\/html/);
    expect(contentTypeFor('a/x.js')).toMatch(/^text\/javascript/);
    expect(contentTypeFor('a/x.css')).toMatch(/^text\/css/);
    expect(contentTypeFor('a/x.bin')).toBe('application/octet-stream');
  });
});

describe('dataset exports', () => {
  const engine = 'http://127.0.0.1:43123';
  it('are downloads only on the engine origin and only at the export path', () => {
    expect(isEngineExport(`${engine}/api/task/t1/optimization/o1/export`, engine)).toBe(true);
    expect(isEngineExport(`${engine}/api/task/t1/optimization/o1/export?token=x`, engine)).toBe(true);
    expect(isEngineExport('http://127.0.0.1:1/api/task/t1/optimization/o1/export', engine)).toBe(false);
    expect(isEngineExport(`${engine}/api/task/t1/optimization/o1`, engine)).toBe(false);
    expect(isEngineExport(`${engine}/api/task/t1/optimization/o1/export/x`, engine)).toBe(false);
  });
});

describe('engine authorization of media requests', () => {
  const engine = 'http://127.0.0.1:43123';
  const token = () => 'tok-1';
  const get = (url: string) => ({ url, method: 'GET' });

  it('adds the Bearer token to GETs of the engine HLS files, replacing one the page sent', () => {
    for (const path of [
      '/api/task/t1/livestream/s1/index.m3u8',
      '/api/stream/p1/seg00001.ts',
      '/api/task/t1/optimization/o1/samples/7/image',
      '/api/task/t1/optimization/o1/export',
    ]) {
      expect(
        withEngineAuthorization(get(`${engine}${path}`), { Accept: '*/*' }, engine, token),
        path,
      ).toEqual({
        Accept: '*/*',
        Authorization: 'Bearer tok-1',
      });
    }
    expect(
      withEngineAuthorization(
        get(`${engine}/api/stream/p1/index.m3u8`),
        { authorization: 'Bearer forged' },
        engine,
        token,
      ),
    ).toEqual({ Authorization: 'Bearer tok-1' });
  });

  it('never sends it anywhere else: other origins, other API paths, other methods', () => {
    let asked = 0;
    const counting = () => {
      asked++;
      return 'tok-1';
    };
    for (const request of [
      get('app://console/index.html'),
      get('http://127.0.0.1:8080/api/stream/p1/index.m3u8'),
      get('https://127.0.0.1:43123/api/stream/p1/index.m3u8'),
      get('http://localhost:43123/api/stream/p1/index.m3u8'),
      get('https://cdn.example.com/x.js'),
      get(`${engine}/api/zapk`),
      get(`${engine}/api/task/t1`),
      get(`${engine}/api/stream/p1/x/y`),
      get(`${engine}/api/task/t1/optimization/o1`),
      get(`${engine}/api/task/t1/optimization/o1/samples`),
      get(`${engine}/api/task/t1/optimization/o1/samples/7/image/x`),
      { url: `${engine}/api/stream/p1/index.m3u8`, method: 'DELETE' },
      { url: `${engine}/api/task/t1/livestream/s1/index.m3u8`, method: 'POST' },
    ]) {
      expect(
        withEngineAuthorization(request, { Accept: '*/*' }, engine, counting),
        JSON.stringify(request),
      ).toEqual({
        Accept: '*/*',
      });
    }
    expect(asked).toBe(0);
  });
});
