import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordProblem } from '../engine/auth/password-policy';
import { startEngine } from '../engine/index';
import { ADMIN_PASSWORD, type Answer, startTestEngine, type TestEngine } from './helpers/engine';

/**
 * The password policy (docs/security.md) on every way a password is set: the API's change, which
 * also needs the current password, the engine's own reset (the desktop console's path) and the first
 * start's VC_ADMIN_PASSWORD.
 */

const WEAK: ReadonlyArray<[string, RegExp]> = [
  ['00000000', /at least 4 different characters/],
  ['aaaaaaaaaaaaaaaa', /at least 4 different characters/],
  ['12121212', /at least 4 different characters/],
  ['12345678', /run of consecutive characters/],
  ['abcdefghij', /run of consecutive characters/],
  ['87654321', /run of consecutive characters/],
  ['password', /most common passwords/],
  ['Password1!', /most common passwords/],
  ['P@ssw0rd2024', /most common passwords/],
  ['qwertyuiop', /most common passwords/],
  ['1q2w3e4r', /most common passwords/],
  ['12341234', /most common passwords/],
  ['ADMIN-2024', /must not be the username/],
  ['admin!!!!', /must not be the username/],
  ['short', /at least 8 characters/],
];

const GOOD = ['test-admin-password', 'correct horse battery', 'kX9#mQ2v', 'adminstrator-of-gate-4'];

describe('the password policy', () => {
  it('refuses each kind of trivial password, saying why', () => {
    for (const [password, why] of WEAK) expect(passwordProblem(password, 'admin'), password).toMatch(why);
    expect(passwordProblem('operator-one', 'operator-one')).toMatch(/must not be the username/);
    expect(passwordProblem('same-as-before', 'admin', 'same-as-before')).toMatch(/differ from the current/);
  });

  it('accepts ordinary passwords', () => {
    for (const password of GOOD) expect(passwordProblem(password, 'admin'), password).toBeNull();
  });
});

describe('changing the password through the API', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => t?.stop());

  const change = (json: unknown) => t.call('PUT', '/api/auth/password', { json });
  const login = (password: string) =>
    t.call('POST', '/api/auth/token', { token: null, json: { username: 'admin', password } });
  const refused = (answer: Answer, field: string, msg: RegExp) => {
    expect({ status: answer.status, code: answer.body.code, field: answer.body.field }).toEqual({
      status: 400,
      code: 40001,
      field,
    });
    expect(answer.body.msg).toMatch(msg);
  };

  it('refuses a weak new password and changes nothing', async () => {
    for (const [password, why] of WEAK.filter(([p]) => p.length >= 8)) {
      refused(await change({ current_password: ADMIN_PASSWORD, password }), 'password', why);
    }
    // Nothing changed: the token still works and the old password still signs in.
    expect((await t.call('GET', '/api/tasks')).status).toBe(200);
    expect((await login(ADMIN_PASSWORD)).body.code).toBe(0);
  });

  it('needs the current password: none, or a wrong one, changes nothing', async () => {
    refused(await change({ password: 'a-brand-new-one' }), 'current_password', /required/);
    refused(
      await change({ current_password: 'not-the-password', password: 'a-brand-new-one' }),
      'current_password',
      /is not the current password/,
    );
    expect((await t.call('GET', '/api/tasks')).status).toBe(200);
    expect((await login('a-brand-new-one')).body.code).toBe(40103);
    expect((await login(ADMIN_PASSWORD)).body.code).toBe(0);
  });

  it('counts wrong current passwords as failed logins: no way around the login limits', async () => {
    let answer: Answer | undefined;
    for (let i = 0; i < 12; i++) {
      answer = await change({ current_password: `guess-number-${i}`, password: 'a-brand-new-one' });
      if (answer.status === 429) break;
    }
    expect({ status: answer?.status, code: answer?.body.code }).toEqual({ status: 429, code: 42902 });
    // Even the right current password waits for the window to end.
    const locked = await change({ current_password: ADMIN_PASSWORD, password: 'a-brand-new-one' });
    expect(locked.status).toBe(429);
    t.advance(60_000);
  });

  it('counts them for the same client as logins, whatever form its address takes', async () => {
    // Dual stack: an IPv4 client arrives as ::ffff:127.0.0.1, which the login limits count as 127.0.0.1.
    const dual = await startTestEngine(undefined, undefined, { host: '::' });
    try {
      const url = `http://127.0.0.1:${dual.engine.port}`;
      const send = (method: string, path: string, json: unknown, token?: string) =>
        fetch(`${url}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
          body: JSON.stringify(json),
        });
      for (let i = 0; i < 10; i++) {
        const answer = await send(
          'PUT',
          '/api/auth/password',
          { current_password: `guess-number-${i}`, password: 'a-brand-new-one' },
          dual.token,
        );
        expect(answer.status).toBe(400);
      }
      // The client spent its 10 failures a minute: a login from it waits, the right password included.
      const login = await send('POST', '/api/auth/token', { username: 'admin', password: ADMIN_PASSWORD });
      expect(login.status).toBe(429);
    } finally {
      await dual.stop();
    }
  });

  it('changes it given the current password', async () => {
    const answer = await change({ current_password: ADMIN_PASSWORD, password: 'a-brand-new-one' });
    expect(answer.body).toEqual({ code: 0, msg: 'success', data: { username: 'admin' } });
    expect((await login('a-brand-new-one')).body.code).toBe(0);
    expect((await login(ADMIN_PASSWORD)).body.code).toBe(40103);
  });

  it("holds the engine's own reset (the desktop console's) to the policy too", async () => {
    await expect(t.engine.resetPassword('admin', '00000000')).rejects.toThrow(
      /at least 4 different characters/,
    );
    expect((await login('a-brand-new-one')).body.code).toBe(0);
    await t.engine.resetPassword('admin', 'reset-from-the-desktop');
    expect((await login('reset-from-the-desktop')).body.code).toBe(0);
  });
});

describe("the first start's VC_ADMIN_PASSWORD", () => {
  it('refuses to start with a weak one, saying why, and leaves the data dir free for the next start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vc-weak-admin-'));
    try {
      const start = (adminPassword: string) =>
        startEngine({ dataDir, port: 0, adminPassword, logLevel: 'silent' });
      await expect(start('00000000')).rejects.toThrow(
        /admin password of a first start \(VC_ADMIN_PASSWORD\) must have at least 4 different characters/,
      );
      const engine = await start('a-good-first-password');
      await engine.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
