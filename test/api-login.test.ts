import { randomBytes, type ScryptOptions, scryptSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientKey } from '../engine/api/client-address';
import { Accounts } from '../engine/auth/accounts';
import { AccountsRepository } from '../engine/auth/accounts-repository';
import { LoginLimiter } from '../engine/auth/login-limiter';
import { HasherBusyError, PasswordHasher } from '../engine/auth/passwords';
import { ManualClock } from '../engine/clock';
import { openDb } from '../engine/store/db';
import { ADMIN_PASSWORD, type Answer, startTestEngine, type TestEngine } from './helpers/engine';

/**
 * Sign-in under attack: password hashing never blocks the event loop, failed attempts are limited per
 * client and per user (429, 42902, Retry-After), and the API stays responsive during a login flood.
 */

const WINDOW_MS = 60_000;
const PER_USER = 20;

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
};

/** What one synchronous scrypt of the engine's cost takes on this machine right now (median of 3). */
function syncScryptMs(): number {
  const runs = [0, 1, 2].map(() => {
    const start = performance.now();
    scryptSync('password', randomBytes(16), 32, { N: 1 << 15, maxmem: 64 * 1024 * 1024 });
    return performance.now() - start;
  });
  return percentile(runs, 50);
}

/**
 * How long the event loop was held, in all, in stretches longer than `over` ms while `during` ran:
 * a total, not the longest stretch, so that one pause of a loaded machine does not decide.
 */
async function heldLoopMs(over: number, during: () => Promise<void>): Promise<number> {
  let last = performance.now();
  let held = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    if (now - last > over) held += now - last;
    last = now;
  }, 1);
  try {
    await during();
  } finally {
    clearInterval(ticker);
  }
  return held;
}

const login = (t: TestEngine, username: string, password: string) =>
  t.call('POST', '/api/auth/token', { token: null, json: { username, password } });

/**
 * A login from another loopback address (Linux routes all of 127.0.0.0/8 to lo): the client socket
 * is bound to it, so the engine sees that address as the client's.
 */
function loginFrom(t: TestEngine, address: string, username: string, password: string): Promise<Answer> {
  const body = JSON.stringify({ username, password });
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port: t.engine.port,
        localAddress: address,
        method: 'POST',
        path: '/api/auth/token',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers))
            if (typeof value === 'string') headers.set(name, value);
          resolve({ status: response.statusCode ?? 0, headers, body: JSON.parse(text) as Answer['body'] });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

function expect429(answer: Answer): number {
  expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 429, code: 42902 });
  const retryAfter = Number(answer.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${retryAfter}`).toBe(true);
  return retryAfter;
}

describe('a login flood against a running engine', () => {
  let t: TestEngine;
  beforeAll(async () => {
    // Many clients at once: the per-client limit is lifted so that every attempt reaches the hasher.
    t = await startTestEngine(undefined, undefined, {
      login: { perClient: 100_000, perUser: PER_USER, windowMs: WINDOW_MS },
    });
  });
  afterAll(async () => t?.stop());

  it('keeps the event loop and /api/health responsive, answers 429 with Retry-After, and lets the right password in after the window', async () => {
    const scryptMs = syncScryptMs();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    const health: number[] = [];
    const answers: Answer[] = [];
    let flooding = true;

    loop.enable();
    const probe = (async () => {
      while (flooding) {
        const start = performance.now();
        expect((await t.call('GET', '/api/health', { token: null })).status).toBe(200);
        health.push(performance.now() - start);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    // A burst of 40 at once, then 10 clients trying one password after another, known and unknown users.
    answers.push(
      ...(await Promise.all(
        Array.from({ length: 40 }, (_, i) => login(t, i % 2 ? 'admin' : `ghost-${i}`, `guess-${i}`)),
      )),
    );
    await Promise.all(
      Array.from({ length: 10 }, async (_, worker) => {
        for (let i = 0; i < 6; i++)
          answers.push(await login(t, i % 2 ? 'admin' : `ghost-${worker}-${i}`, `wrong-${worker}-${i}`));
      }),
    );
    flooding = false;
    await probe;
    loop.disable();

    const maxLoopMs = loop.max / 1e6;
    console.info(
      `login flood: ${answers.length} logins; sync scrypt ${scryptMs.toFixed(0)} ms; event-loop delay max ${maxLoopMs.toFixed(0)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms; /api/health (${health.length} calls) p50 ${percentile(health, 50).toFixed(0)} ms, p95 ${percentile(health, 95).toFixed(0)} ms`,
    );
    // The old engine ran scrypt on the loop: tens of whole-scrypt stalls in a row (max 10.7 s, health
    // p50 3.3 s). Bounds with room for a busy machine's scheduling, far below that: the p99 and the
    // health calls tell repeated stalls; the single longest is the machine's as much as the engine's
    // (CI, running other test files beside it: 708 ms with scrypt at 205 ms and the p99 at 23 ms).
    expect(maxLoopMs).toBeLessThan(10 * scryptMs);
    expect(loop.percentile(99) / 1e6).toBeLessThan(scryptMs);
    expect(percentile(health, 95)).toBeLessThan(scryptMs);

    const codes = answers.map((a) => a.body.code);
    expect(codes.filter((c) => c !== 40103 && c !== 42902)).toEqual([]);
    const throttled = answers.filter((a) => a.body.code === 42902);
    expect(throttled.length).toBeGreaterThan(0);
    for (const answer of throttled) expect429(answer);

    // The admin had more failures than its limit: this client, which failed, waits for the window
    // even with the right password; a client that has not failed gets in.
    const blocked = await login(t, 'admin', ADMIN_PASSWORD);
    expect(expect429(blocked)).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect((await loginFrom(t, '127.0.0.7', 'admin', ADMIN_PASSWORD)).body.code).toBe(0);
    t.clock.advance(WINDOW_MS);
    expect((await login(t, 'admin', ADMIN_PASSWORD)).body.code).toBe(0);
  }, 120_000);

  it('hashes a new password off the event loop too', async () => {
    t.clock.advance(WINDOW_MS);
    // Each user changes its own password (the change revokes that user's tokens), all at once.
    const users = ['admin', ...Array.from({ length: 5 }, (_, i) => `operator-${i}`)];
    for (const user of users) await t.engine.resetPassword(user, 'first-password');
    const tokens = users.map((user) => t.engine.issueToken(user).access_token);
    const scryptMs = syncScryptMs();
    let changes: Answer[] = [];
    const held = await heldLoopMs(scryptMs / 2, async () => {
      changes = await Promise.all(
        tokens.map((token) =>
          t.call('PUT', '/api/auth/password', {
            token,
            json: { current_password: 'first-password', password: 'another-password' },
          }),
        ),
      );
    });
    for (const answer of changes) expect(answer.body.code).toBe(0);
    // On the loop, the six checks and six hashes would hold it about 12 scrypts in all; a loaded
    // machine's pauses of the whole process add a little, never that much.
    expect(held).toBeLessThan(4 * scryptMs);
    for (const user of users) expect((await login(t, user, 'another-password')).body.code).toBe(0);
  });
});

describe('failed logins are limited per client and per user', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => t?.stop());

  it('refuses a client after 10 failures in a minute, the right password included, until the window passes', async () => {
    for (let i = 0; i < 10; i++) expect((await login(t, 'admin', `wrong-${i}`)).body.code).toBe(40103);
    const refused = await login(t, 'admin', 'wrong-again');
    expect(expect429(refused)).toBe(60);
    expect(expect429(await login(t, 'someone-else', 'x'))).toBe(60);
    expect429(await login(t, 'admin', ADMIN_PASSWORD));
    t.clock.advance(30_000);
    expect(expect429(await login(t, 'admin', ADMIN_PASSWORD))).toBe(30);
    t.clock.advance(30_000);
    expect((await login(t, 'admin', ADMIN_PASSWORD)).body.code).toBe(0);
  });

  // 31 password checks (scrypt, slow on purpose): seconds each on a loaded machine.
  it('does not count successful logins', { timeout: 120_000 }, async () => {
    t.clock.advance(WINDOW_MS);
    for (let i = 0; i < 30; i++) expect((await login(t, 'admin', ADMIN_PASSWORD)).body.code).toBe(0);
    expect((await login(t, 'admin', 'wrong')).body.code).toBe(40103);
  });
});

describe('failures from many addresses', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => t?.stop());

  it('three addresses failing 10 times each do not lock the admin out of a client that has not failed', async () => {
    for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4'])
      for (let i = 0; i < 10; i++)
        expect((await loginFrom(t, address, 'admin', `wrong-${address}-${i}`)).body.code).toBe(40103);
    // Each of them is at its own limit, the right password included.
    expect429(await loginFrom(t, '127.0.0.2', 'admin', ADMIN_PASSWORD));
    // The admin is at its limit (30): a client that has not failed gets in.
    expect((await loginFrom(t, '127.0.0.1', 'admin', ADMIN_PASSWORD)).body.code).toBe(0);
    // One that fails once now waits for the user's window, the right password included.
    expect((await loginFrom(t, '127.0.0.6', 'admin', 'one-more-guess')).body.code).toBe(40103);
    expect(expect429(await loginFrom(t, '127.0.0.6', 'admin', ADMIN_PASSWORD))).toBeLessThanOrEqual(60);
    expect((await loginFrom(t, '127.0.0.5', 'admin', ADMIN_PASSWORD)).body.code).toBe(0);
  }, 60_000);
});

describe('a flood of made-up usernames', () => {
  let t: TestEngine;
  beforeAll(async () => {
    // Small tables, so that a few dozen logins are a flood; at the defaults see docs/security.md.
    t = await startTestEngine(undefined, undefined, { login: { maxTracked: 8 } });
  });
  afterAll(async () => t?.stop());

  it('leaves the right password accepted', async () => {
    const addresses = Array.from({ length: 6 }, (_, i) => `127.0.1.${i + 1}`);
    // All at once: most are refused as "checking too many passwords at once" (never checked, so
    // never counted); then one after another, each checked and failed.
    const burst = await Promise.all(
      addresses.flatMap((address, a) =>
        Array.from({ length: 9 }, (_, i) => loginFrom(t, address, `ghost-${a}-${i}`, 'guess')),
      ),
    );
    expect(burst.map((b) => b.body.code).filter((c) => c !== 40103 && c !== 42902)).toEqual([]);
    const checked: number[] = [];
    for (let i = 0; i < 20; i++)
      checked.push((await loginFrom(t, `127.0.2.${i % 4}`, `made-up-${i}`, 'guess')).body.code);
    expect((await loginFrom(t, '127.0.0.1', 'admin', ADMIN_PASSWORD)).body.code).toBe(0);
    expect((await loginFrom(t, '127.0.3.1', 'admin', ADMIN_PASSWORD)).body.code).toBe(0);
    // Every made-up name was checked and failed: none was refused for want of room.
    expect(checked).toEqual(checked.map(() => 40103));
  }, 60_000);
});

describe('LoginLimiter', () => {
  const limits = { windowMs: 1000, perClient: 3, perUser: 5, maxTracked: 4 };

  it('limits failures per client and per username in fixed windows; over the user’s limit only a client without a failure may try', () => {
    const clock = new ManualClock();
    const limiter = new LoginLimiter(clock, limits);
    for (const client of ['a', 'a', 'a']) expect(limiter.begin(client, 'admin', true).ok).toBe(true);
    expect(limiter.begin('a', 'admin', true)).toEqual({ ok: false, retryAfterMs: 1000 });
    expect(limiter.begin('a', 'other', true)).toEqual({ ok: false, retryAfterMs: 1000 });
    clock.advance(400);
    // Two clients bring the user to its limit (5): a client that failed now waits for the user's window.
    for (const client of ['b', 'b']) expect(limiter.begin(client, 'admin', true).ok).toBe(true);
    expect(limiter.begin('b', 'admin', true)).toEqual({ ok: false, retryAfterMs: 600 });
    // A client without a failure may try once more; failed, it waits too.
    expect(limiter.begin('c', 'admin', true).ok).toBe(true);
    expect(limiter.begin('c', 'admin', true)).toEqual({ ok: false, retryAfterMs: 600 });
    expect(limiter.begin('c', 'other', true).ok).toBe(true);
    clock.advance(600);
    expect(limiter.begin('b', 'admin', true).ok).toBe(true);
  });

  it('forgets an attempt that succeeded, leaving nothing behind', () => {
    const limiter = new LoginLimiter(new ManualClock(), limits);
    for (let i = 0; i < 10; i++) {
      const attempt = limiter.begin('a', 'admin', true);
      if (!attempt.ok) throw new Error(`attempt ${i} refused`);
      attempt.forget();
    }
    expect(limiter.trackedCount()).toBe(0);
    expect(limiter.begin('a', 'admin', true).ok).toBe(true);
  });

  it('remembers at most maxTracked of each; made-up usernames push out each other, never a user’s window', () => {
    const clock = new ManualClock();
    const limiter = new LoginLimiter(clock, limits);
    // The user reaches its limit first, then 20 made-up names from 20 clients fill both tables.
    for (const client of ['a', 'a', 'a', 'b', 'b'])
      expect(limiter.begin(client, 'admin', true).ok).toBe(true);
    for (let i = 0; i < 20; i++) expect(limiter.begin(`client-${i}`, `ghost-${i}`, false).ok).toBe(true);
    expect(limiter.trackedCount()).toBe(8);
    // The user's window is still there: a client that failed (on a made-up name) waits for it.
    expect(limiter.begin('client-19', 'admin', true)).toEqual({ ok: false, retryAfterMs: 1000 });
    expect(limiter.begin('fresh', 'admin', true).ok).toBe(true);
  });
});

describe('clientKey', () => {
  it('counts an IPv4 address (mapped or not) as itself and an IPv6 address by its /64', () => {
    expect(['127.0.0.2', '::ffff:127.0.0.2', '::FFFF:127.0.0.2'].map(clientKey)).toEqual(
      Array(3).fill('127.0.0.2'),
    );
    expect(
      ['2001:db8:1:2::9', '2001:DB8:0001:0002:aaaa::1', '2001:db8:1:2:ffff:ffff:ffff:ffff'].map(clientKey),
    ).toEqual(Array(3).fill('2001:db8:1:2::/64'));
    expect(clientKey('2001:db8:1:3::9')).toBe('2001:db8:1:3::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80::/64');
  });
});

describe('PasswordHasher', () => {
  it('runs at most `hashConcurrency` hashes at once and refuses beyond its queue', async () => {
    const hasher = new PasswordHasher({ hashConcurrency: 2, hashQueue: 3 });
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, hasher.running);
    }, 1);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => hasher.hash('a-password')));
    clearInterval(watch);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(3);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(HasherBusyError);
    expect(most).toBe(2);
    expect(hasher.running).toBe(0);
  });

  it('checks an unknown user with exactly one scrypt, like a known one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-accounts-'));
    const db = openDb(dir);
    try {
      let scrypts = 0;
      class CountingHasher extends PasswordHasher {
        protected override async scrypt(
          password: string,
          salt: Buffer,
          length: number,
          options: ScryptOptions,
        ): Promise<Buffer> {
          scrypts++;
          return super.scrypt(password, salt, length, options);
        }
      }
      const accounts = new Accounts(new AccountsRepository(db), new ManualClock(), {
        hasher: new CountingHasher(),
      });
      await accounts.setPassword('admin', 'a-password');
      scrypts = 0;
      expect(await accounts.checkPassword('admin', 'wrong')).toBe(false);
      expect(scrypts).toBe(1);
      expect(await accounts.checkPassword('ghost', 'wrong')).toBe(false);
      expect(scrypts).toBe(2);
      expect(await accounts.checkPassword('admin', 'a-password')).toBe(true);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
