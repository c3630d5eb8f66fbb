/**
 * The console's security policy: the same page is served by the desktop shell (app://console) and by
 * the headless engine (the web console), so both take their Content-Security-Policy from here.
 * Plain TypeScript: no DOM, no Node, no Electron.
 */

/** The CSP source for the engine: its origin only (scheme, host, port), http(s) only, no credentials. */
export function engineSource(engineUrl: string): string {
  let parsed: URL;
  try {
    parsed = new URL(engineUrl);
  } catch {
    throw new Error(`engine url is not a URL: ${engineUrl}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`engine url must be http(s): ${engineUrl}`);
  }
  if (parsed.username || parsed.password) throw new Error('engine url must not carry credentials');
  return parsed.origin;
}

/** Used where the port is not known yet (the meta tag baked into index.html): any loopback port. */
export const LOOPBACK_ANY_PORT = 'http://127.0.0.1:*';

export interface CspOptions {
  /** http://127.0.0.1:PORT of the running engine (HLS media and, later, snapshots). */
  engineUrl?: string | undefined;
  /** For the <meta> tag: no frame-ancestors (ignored in meta) and any loopback port for the engine. */
  meta?: boolean;
  /** Vite dev server only: its React refresh preamble and injected styles are inline. */
  dev?: boolean;
}

/** The console's Content-Security-Policy. Without `dev` nothing inline, nothing remote, no eval. */
export function buildCsp(options: CspOptions = {}): string {
  const engine = options.engineUrl
    ? [engineSource(options.engineUrl)]
    : options.meta
      ? [LOOPBACK_ANY_PORT]
      : [];
  const inline = options.dev ? ["'unsafe-inline'"] : [];
  const directives: Array<[string, string[]]> = [
    ['default-src', ["'self'"]],
    ['script-src', ["'self'", ...inline]],
    ['style-src', ["'self'", ...inline]],
    // The engine's images: optimization samples, loaded by URL.
    ['img-src', ["'self'", 'data:', 'blob:', ...engine]],
    ['media-src', ["'self'", 'blob:', ...engine]],
    // The AI video's low-latency socket: the engine's origin as ws:// (wss:// behind TLS).
    ['connect-src', ["'self'", ...engine, ...engine.map((source) => source.replace(/^http/, 'ws'))]],
    // hls.js runs its demuxer in a worker created from a blob: URL.
    ['worker-src', ["'self'", 'blob:']],
    ['font-src', ["'self'"]],
    ['frame-src', ["'none'"]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'none'"]],
    ['form-action', ["'self'"]],
  ];
  if (!options.meta) directives.push(['frame-ancestors', ["'none'"]]);
  return directives.map(([name, sources]) => `${name} ${sources.join(' ')}`).join('; ');
}

/** Headers sent with every page of the console (CSP plus the usual hardening). */
export function securityHeaders(csp: string): Record<string, string> {
  return {
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
  };
}
