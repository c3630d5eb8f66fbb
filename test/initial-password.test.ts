import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INITIAL_PASSWORD_FILE } from '../engine/auth/initial-password';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';

/** The random admin password of a first start goes to a 0600 file in the data dir, never to the log. */
const dataDir = mkdtempSync(join(tmpdir(), 'vc-initial-password-'));
const engines: EngineProcess[] = [];

afterAll(async () => {
  for (const engine of engines) await stopEngine(engine);
  rmSync(dataDir, { recursive: true, force: true });
});

async function tokenAnswer(url: string, password: string): Promise<Record<string, unknown>> {
  const answer = await fetch(`${url}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  return ((await answer.json()) as { data: Record<string, unknown> }).data;
}

describe('the first start without VC_ADMIN_PASSWORD', () => {
  it('keeps the random password out of the log, in a file only its user reads, deleted on change', async () => {
    const first = await spawnEngine(dataDir, '');
    engines.push(first);
    const file = join(dataDir, INITIAL_PASSWORD_FILE);
    expect(existsSync(file)).toBe(true);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    const password = readFileSync(file, 'utf8').trim();
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(first.output()).toContain(file);
    expect(first.output()).not.toContain(password);

    const token = await signIn(first.url, password);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The sign-in says the password is the first start's, so the console asks to replace it.
    expect(await tokenAnswer(first.url, password)).toMatchObject({ password_change_required: true });
    // Changing it needs the current password: a wrong one is refused, naming the field, and audited.
    const refused = await fetch(`${first.url}/api/auth/password`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ current_password: 'not-the-password', password: 'chosen-by-admin' }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      code: 40001,
      msg: 'body.current_password: is not the current password',
      field: 'current_password',
    });
    const audit = await callApi<{ items: { action: string; outcome: string; code: number }[] }>(
      first.url,
      token,
      'GET',
      '/api/audit?action=auth.password_change',
    );
    expect(audit.items.map((item) => [item.outcome, item.code])).toEqual([['failed', 40001]]);
    expect(existsSync(file)).toBe(true);
    await callApi(first.url, token, 'PUT', '/api/auth/password', {
      current_password: password,
      password: 'chosen-by-admin',
    });
    expect(existsSync(file)).toBe(false);
    await stopEngine(first);

    // The account exists now: a restart makes no new password.
    const second = await spawnEngine(dataDir, '');
    engines.push(second);
    expect(existsSync(file)).toBe(false);
    expect(await signIn(second.url, 'chosen-by-admin')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // A chosen password needs no replacing: the answer is the contract's alone.
    expect(Object.keys(await tokenAnswer(second.url, 'chosen-by-admin')).sort()).toEqual([
      'access_token',
      'expires_in',
      'token_type',
    ]);
    // The log file has the runs' lines (the password change among them), never a password or token.
    const logged = readFileSync(join(dataDir, 'logs', 'engine.log'), 'utf8');
    expect(logged).toContain('"action":"auth.password_change"');
    for (const secret of [password, token, 'chosen-by-admin']) expect(logged).not.toContain(secret);
  });
});
