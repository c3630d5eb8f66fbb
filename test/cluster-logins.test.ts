import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Accounts } from '../engine/auth/accounts';
import { AccountsRepository } from '../engine/auth/accounts-repository';
import { type LoginAttempt, LoginLimiter } from '../engine/auth/login-limiter';
import { PasswordHasher } from '../engine/auth/passwords';
import { ManualClock, systemClock } from '../engine/clock';
import { type ClusterConnection, connectCluster } from '../engine/cluster/connection';
import {
  LOGIN_CLIENTS_BUCKET,
  LOGIN_USERS_BUCKET,
  openSiteLogins,
  SITE_LOGIN_BUCKET_BYTES,
  type SiteLoginBuckets,
  SiteLogins,
} from '../engine/cluster/site-logins';
import { openDb } from '../engine/store/db';
import { type SiteEngine, startSite, stopSite } from './helpers/cluster-engines';
import { settled } from './helpers/eventually';
import { ADMIN_PASSWORD } from './helpers/fixtures';
import { NATS_PASSWORD, NATS_USER, NatsCluster } from './helpers/nats-cluster';

const LIMITS = { windowMs: 60_000, perClient: 4, perUser: 6 };
const silent = pino({ level: 'silent' });
/** How long the three nodes below wait for the site's count: far past any load's delay. */
const COUNTING_WAIT_MS = 30_000;

/** Whether each attempt was let through (true) or refused (false). */
const oks = (attempts: readonly LoginAttempt[]) => attempts.map((attempt) => attempt.ok);

/**
 * The site's failed-login count on one real NATS server, three connections playing three nodes, each
 * with its own SiteLogins on the same buckets; a clock of the test's (the buckets' own expiry is a
 * minute of real time, longer than any test here).
 */
describe("the site's failed-login count", () => {
  let nats: NatsCluster;
  const connections: ClusterConnection[] = [];
  let buckets: SiteLoginBuckets;
  const clock = new ManualClock();
  let nodes: SiteLogins[];

  beforeAll(async () => {
    nats = await NatsCluster.start(1, 64);
    const opened = await Promise.all(
      ['n1', 'n2', 'n3'].map(async (name) => {
        const conn = await connectCluster(
          { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD },
          name,
        );
        connections.push(conn);
        return openSiteLogins(conn, 1, LIMITS.windowMs);
      }),
    );
    buckets = opened[0] as SiteLoginBuckets;
    // These tests judge the site's counting: a loaded machine must not make it fall back to a node's own.
    nodes = opened.map(
      (opened) => new SiteLogins(opened, LIMITS, silent, () => clock.now(), COUNTING_WAIT_MS),
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(connections.map((conn) => conn.close()));
    await nats?.dispose();
  });

  /** One attempt on each node in turn, `count` in all. */
  async function spread(count: number, client: string, username: string, existing = true) {
    const attempts: LoginAttempt[] = [];
    for (let i = 0; i < count; i++)
      attempts.push(await (nodes[i % 3] as SiteLogins).begin(client, username, existing));
    return attempts;
  }

  it('refuses guesses spread over three nodes after as many as one node allows', async () => {
    const site = await spread(7, 'client-a', 'admin');
    expect(oks(site)).toEqual([true, true, true, true, false, false, false]);
    const refused = site[4] as Extract<LoginAttempt, { ok: false }>;
    expect(refused.retryAfterMs).toBe(LIMITS.windowMs);
    // One node's own limiter, for comparison: the same four.
    const local = new LoginLimiter(clock, LIMITS);
    expect(Array.from({ length: 7 }, () => local.begin('client-a', 'admin', true).ok)).toEqual(oks(site));
    // Three nodes counting alone would have let twelve through.
    const alone = [1, 2, 3].map(() => new LoginLimiter(clock, LIMITS));
    const separately = Array.from(
      { length: 15 },
      (_, i) => alone[i % 3]?.begin('client-a', 'admin', true).ok,
    );
    expect(separately.filter(Boolean)).toHaveLength(12);
    // After the window, the client may try again.
    clock.advance(LIMITS.windowMs);
    expect(oks(await spread(1, 'client-a', 'admin'))).toEqual([true]);
  });

  it('limits a burst of concurrent guesses on every node like a sequence', async () => {
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (nodes[i % 3] as SiteLogins).begin('client-burst', 'burst', true)),
    );
    expect(oks(burst).filter(Boolean)).toHaveLength(LIMITS.perClient);
  });

  it("slows a user's guessing from many clients, never locking out a client without a failure", async () => {
    const many = await Promise.all(
      Array.from({ length: LIMITS.perUser }, (_, i) => spread(1, `client-u${i}`, 'operator')),
    );
    expect(many.flat().every((attempt) => attempt.ok)).toBe(true);
    // A client that failed in the window waits; one that did not may still try, on any node.
    expect(oks(await spread(1, 'client-u0', 'operator'))).toEqual([false]);
    expect(oks(await spread(3, 'client-fresh', 'operator'))).toEqual([true, false, false]);
  });

  it('takes back an attempt that succeeded', async () => {
    const first = await spread(LIMITS.perClient, 'client-ok', 'admin');
    for (const attempt of first) if (attempt.ok) attempt.forget();
    // The client's key: a SHA-256 of its name.
    const key = createHash('sha256').update('client-ok').digest('base64url');
    await settled('the attempts taken back', async () => {
      const count = (await buckets.clients.get(key))?.json<{ count: number }>().count;
      if (count !== 0) throw new Error(`count ${count}`);
      return count;
    });
    expect(oks(await spread(LIMITS.perClient, 'client-ok', 'admin'))).toEqual(
      Array(LIMITS.perClient).fill(true),
    );
  });

  it('stores nothing for a made-up username, and a fixed-size key whatever a name holds', async () => {
    const usersBefore = (await buckets.users.status()).values;
    const clientsBefore = (await buckets.clients.status()).values;
    await spread(3, `client-${'x'.repeat(10_000)}`, `made-up-${'y'.repeat(10_000)}`, false);
    expect((await buckets.users.status()).values).toBe(usersBefore);
    expect((await buckets.clients.status()).values).toBe(clientsBefore + 1);
    const keys: string[] = [];
    for await (const key of await buckets.clients.keys()) keys.push(key);
    expect(new Set(keys.map((key) => key.length))).toEqual(new Set([43]));
    // The buckets are bounded in bytes and keep an entry one window after its last write.
    for (const name of [LOGIN_CLIENTS_BUCKET, LOGIN_USERS_BUCKET]) {
      const { config } = await (connections[0] as ClusterConnection).jsm.streams.info(`KV_${name}`);
      expect([config.max_bytes, config.max_age]).toEqual([SITE_LOGIN_BUCKET_BYTES, LIMITS.windowMs * 1e6]);
    }
  });
});

/**
 * NATS unreachable: the node's own count decides, never no limit. A real NATS server, stopped under a
 * node whose Accounts count with the site.
 */
describe('failed logins while the site does not answer', () => {
  it("refuses guesses by the node's own count", async () => {
    const nats = await NatsCluster.start(1, 64);
    const conn = await connectCluster(
      { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD },
      'alone',
    );
    const dir = mkdtempSync(join(tmpdir(), 'vc-logins-'));
    const db = openDb(dir);
    try {
      const site = new SiteLogins(await openSiteLogins(conn, 1, LIMITS.windowMs), LIMITS, silent);
      const accounts = new Accounts(new AccountsRepository(db), systemClock, {
        login: LIMITS,
        hasher: new PasswordHasher(),
        sharedLogins: site,
      });
      await accounts.setPassword('admin', 'correct-horse-battery');
      await nats.servers[0]?.stop();
      const codes: string[] = [];
      for (let i = 0; i < LIMITS.perClient + 2; i++)
        codes.push(
          await accounts.signIn('admin', 'wrong-password-1', 'client-x').then(
            () => 'signed in',
            (error: { kind?: string }) => error.kind ?? String(error),
          ),
        );
      expect(codes).toEqual([
        ...Array(LIMITS.perClient).fill('auth.bad_credentials'),
        'auth.too_many_logins',
        'auth.too_many_logins',
      ]);
    } finally {
      await conn.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
      await nats.dispose();
    }
  }, 60_000);
});

/** POST /api/auth/token from a loopback address of the caller's choosing (127.0.0.x: another client). */
function signInFrom(url: string, from: string, password: string): Promise<number> {
  const body = JSON.stringify({ username: 'admin', password });
  return new Promise((done, fail) => {
    const req = request(
      `${url}/api/auth/token`,
      { method: 'POST', localAddress: from, headers: { 'content-type': 'application/json' } },
      (answer) => {
        let text = '';
        answer.on('data', (chunk) => (text += chunk));
        answer.on('end', () => done((JSON.parse(text) as { code: number }).code));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

/** Three real engines (CLI processes, each its own NATS user) on one NATS server, with the default limits. */
describe('failed logins spread over the nodes of a site', () => {
  let nats: NatsCluster;
  let engines: SiteEngine[] = [];

  beforeAll(async () => {
    nats = await NatsCluster.start(1);
    engines = await startSite(nats, 3, 'login-a', 'login-b', 'login-c');
  }, 180_000);

  afterAll(async () => {
    await stopSite(engines);
    await nats?.dispose();
  });

  it('refuses the same number of guesses as one node, and lets a good login in after the window', async () => {
    const guess = (engine: SiteEngine, from: string) => signInFrom(engine.url, from, 'not-the-password');
    // One node: 10 guesses a minute from one client (DEFAULT_LOGIN_LIMITS.perClient).
    const one: number[] = [];
    for (let i = 0; i < 12; i++) one.push(await guess(engines[0] as SiteEngine, '127.0.0.2'));
    // Spread over the three nodes, from another client.
    const spread: number[] = [];
    for (let i = 0; i < 12; i++) spread.push(await guess(engines[i % 3] as SiteEngine, '127.0.0.3'));
    const wrong = Array(10).fill(40103);
    expect(one).toEqual([...wrong, 42902, 42902]);
    expect(spread).toEqual([...wrong, 42902, 42902]);
    // Even the right password waits for the window's end, on every node.
    for (const engine of engines)
      expect(await signInFrom(engine.url, '127.0.0.3', ADMIN_PASSWORD)).toBe(42902);
    const after = await settled(
      'a good login after the window',
      async () => {
        const code = await signInFrom((engines[1] as SiteEngine).url, '127.0.0.3', ADMIN_PASSWORD);
        if (code !== 0) throw new Error(`answered ${code}`);
        return code;
      },
      120_000,
      2_000,
    );
    expect(after).toBe(0);
    // Per-node NATS users: the site ran without a permission refused.
    for (const engine of engines) expect(engine.log).not.toMatch(/permission/i);
  }, 180_000);
});
