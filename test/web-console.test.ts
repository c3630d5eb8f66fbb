import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleFixture, startTestEngine, type TestEngine } from './helpers/engine';

/** The headless engine serves the built console as a web page, with the console's CSP. */
let t: TestEngine;

beforeAll(async () => {
  t = await startTestEngine(undefined, consoleFixture());
});
afterAll(async () => t?.stop());

describe('web console', () => {
  it('serves index.html at / and for the app routes, with a strict CSP and no token needed', async () => {
    for (const path of ['/', '/tasks', '/packages/builtin']) {
      const answer = await fetch(`${t.engine.url}${path}`);
      expect(answer.status, path).toBe(200);
      expect(await answer.text()).toContain('<title>Vision Console</title>');
      const csp = answer.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const script = await fetch(`${t.engine.url}/assets/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
  });

  it('keeps the API answering in its envelope beside the console', async () => {
    const unknown = await fetch(`${t.engine.url}/api/nothing`, {
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 40404 });
    const wrongMethod = await fetch(`${t.engine.url}/api/task`, {
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(wrongMethod.status).toBe(405);
  });
});
