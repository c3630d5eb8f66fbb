import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Accounts } from '../engine/auth/accounts';
import { AccountsRepository } from '../engine/auth/accounts-repository';
import { INITIAL_PASSWORD_FILE } from '../engine/auth/initial-password';
import { PasswordHasher } from '../engine/auth/passwords';
import type { MqttSettingsView } from '../engine/callbacks/mqtt-settings';
import { systemClock } from '../engine/clock';
import { connectCluster } from '../engine/cluster/connection';
import { MAX_TOKEN_LOOKUPS, SiteAccounts } from '../engine/cluster/site-accounts';
import { openSiteStore } from '../engine/cluster/site-store';
import { openDb } from '../engine/store/db';
import { SiteEngine, startSite, stopSite } from './helpers/cluster-engines';
import { eventually, settled } from './helpers/eventually';
import { ADMIN_PASSWORD, VIDEO } from './helpers/fixtures';
import { Mosquitto } from './helpers/mosquitto';
import { NATS_PASSWORD, NATS_USER, NatsCluster } from './helpers/nats-cluster';

/**
 * Cluster mode: users, tokens, the stream-token key and the MQTT settings are the site's, not each
 * node's. Two real engines (CLI processes) on one real NATS server, a real mosquitto broker; a third
 * engine, a workstation with users of its own, joins the site.
 */
let nats: NatsCluster;
let broker: Mosquitto;
let a: SiteEngine;
let b: SiteEngine;
const engines: SiteEngine[] = [];

beforeAll(async () => {
  [nats, broker] = await Promise.all([NatsCluster.start(1), Mosquitto.start()]);
  [a, b] = (await startSite(nats, 2, 'acc-a', 'acc-b')) as [SiteEngine, SiteEngine];
  engines.push(a, b);
}, 180_000);

afterAll(async () => {
  await stopSite(engines);
  await Promise.all([nats?.dispose(), broker?.dispose()]);
});

async function signIn(engine: SiteEngine, password: string, username = 'admin'): Promise<[number, string]> {
  const answer = await fetch(`${engine.url}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const body = (await answer.json()) as { code: number; data?: { access_token: string } };
  return [body.code, body.data?.access_token ?? ''];
}

/** The status and envelope code of a GET with the token in the header, or as ?token= when asked. */
async function get(url: string, token: string, inQuery = false): Promise<[number, number?]> {
  const answer = await fetch(inQuery ? `${url}${url.includes('?') ? '&' : '?'}token=${token}` : url, {
    headers: inQuery ? {} : { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(10_000),
  });
  const json = answer.headers.get('content-type')?.includes('json');
  return json ? [answer.status, ((await answer.json()) as { code: number }).code] : [answer.status];
}

async function call<T>(engine: SiteEngine, token: string, method: string, path: string, body?: unknown) {
  const answer = await fetch(`${engine.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await answer.json()) as { code: number; msg: string; data: T };
}

/** Holds the live event feed open; `ended` settles when the engine ends it. */
async function openFeed(engine: SiteEngine, token: string): Promise<{ ended: Promise<void>; open: boolean }> {
  const answer = await fetch(`${engine.url}/api/events/stream`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(answer.status).toBe(200);
  const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
  const feed = { open: true, ended: Promise.resolve() };
  feed.ended = (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // The engine closed the connection.
    }
    feed.open = false;
  })();
  return feed;
}

describe('one site, one set of accounts', () => {
  it('a token signed in on one node is valid on the other at once, and signing out there ends it', async () => {
    const [code, token] = await signIn(a, ADMIN_PASSWORD);
    expect(code).toBe(0);
    // No wait: the token is in the site before the sign-in answers.
    expect(await get(`${b.url}/api/tasks`, token)).toEqual([200, 0]);
    expect((await call(b, token, 'POST', '/api/auth/logout')).code).toBe(0);
    expect(await get(`${b.url}/api/tasks`, token)).toEqual([401, 40102]);
    await settled('the sign-out on B reaching A', async () => {
      expect(await get(`${a.url}/api/tasks`, token)).toEqual([401, 40102]);
      return true;
    });
    // A made-up token is refused on every node.
    expect(await get(`${a.url}/api/tasks`, 'x'.repeat(43))).toEqual([401, 40102]);
  }, 60_000);

  it("a link signed on one node opens on the other, and an HLS segment's stream token verifies there", async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const minted = await call<{ links: { url: string }[] }>(a, a.token, 'POST', '/api/auth/link', {
      paths: [`/api/task/${missing}/snapshot`],
    });
    expect(minted.code).toBe(0);
    const link = minted.data.links[0]?.url as string;
    // Past authentication on B (the link's token is good there): no such task.
    expect(await get(`${b.url}${link}`, '', false)).toEqual([404, 40401]);
    expect(await get(`${b.url}${link.replace(/token=./, 'token=Z')}`, '', false)).toEqual([401, 40102]);

    const preview = await call<{ stream_id: string; hls_url: string }>(a, a.token, 'POST', '/api/stream', {
      video_url: VIDEO,
      device_id: 'accounts-cam',
    });
    expect(preview.code, preview.msg).toBe(0);
    const id = preview.data.stream_id;
    const segment = await eventually('a segment in the playlist', async () => {
      const playlist = await fetch(`${a.url}/api/stream/${id}/index.m3u8?token=${a.token}`);
      return playlist.status === 200
        ? (await playlist.text()).split('\n').find((line) => line.startsWith('seg'))
        : undefined;
    });
    const [file, query] = segment.split('?') as [string, string];
    const streamToken = new URLSearchParams(query).get('token') as string;
    expect(streamToken).not.toBe(a.token);
    expect(await get(`${a.url}/api/stream/${id}/${file}`, streamToken, true)).toEqual([200]);
    // The stream runs on A; B lets the segment's token through to say it has no such stream.
    expect(await get(`${b.url}/api/stream/${id}/${file}`, streamToken, true)).toEqual([404, 40405]);
    expect(await get(`${b.url}/api/stream/other/${file}`, streamToken, true)).toEqual([401, 40102]);
    expect((await call(a, a.token, 'DELETE', `/api/stream/${id}`)).code).toBe(0);
  });

  it('MQTT settings put on one node apply on every node, each connecting with its own client id', async () => {
    const put = await call<MqttSettingsView>(a, a.token, 'PUT', '/api/settings/mqtt', {
      enabled: true,
      url: broker.url,
      username: 'site-user',
      password: 'site-secret',
    });
    expect(put.code, put.msg).toBe(0);
    const onB = await settled('the settings on B, connected', async () => {
      const view = (await call<MqttSettingsView>(b, b.token, 'GET', '/api/settings/mqtt')).data;
      expect(view).toMatchObject({
        enabled: true,
        url: broker.url,
        username: 'site-user',
        password_set: true,
        status: { connected: true },
      });
      return view;
    });
    expect(onB.client_id).not.toBe(put.data.client_id);
    const off = await call<MqttSettingsView>(b, b.token, 'PUT', '/api/settings/mqtt', { enabled: false });
    expect(off.code, off.msg).toBe(0);
    await settled('MQTT off on A', async () => {
      const view = (await call<MqttSettingsView>(a, a.token, 'GET', '/api/settings/mqtt')).data;
      expect([view.enabled, view.status.connected]).toEqual([false, false]);
      return true;
    });
  }, 90_000);

  it("a joining workstation brings in the users the site lacks, and keeps the site's password of one both have", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-site-acc-c-'));
    const db = openDb(dir);
    const hasher = new PasswordHasher();
    const rows = new AccountsRepository(db);
    rows.setPassword('admin', await hasher.hash('workstation-admin-1'), Date.now());
    rows.setPassword('operator', await hasher.hash('operator-password-1'), Date.now());
    db.close();
    const c = new SiteEngine('acc-c', dir, nats.urls);
    engines.push(c);
    // Signs in as admin with the site's password: its own was replaced.
    await c.start();
    // JSON lines: the quotes are escaped.
    expect(c.log).toMatch(/user \\"admin\\" exists in the site with another password: the site's is kept/);
    expect((await signIn(c, 'workstation-admin-1'))[0]).toBe(40103);
    expect((await signIn(a, 'operator-password-1', 'operator'))[0]).toBe(0);
    expect((await signIn(b, 'operator-password-1', 'operator'))[0]).toBe(0);
  }, 120_000);

  it('a new node of a site with an admin makes no admin password of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-site-acc-d-'));
    // No password given: a first start would write a random one to initial-admin-password.
    const d = new SiteEngine('acc-d', dir, nats.urls, [], { VC_ADMIN_PASSWORD: '' });
    engines.push(d);
    await d.start();
    expect(existsSync(join(dir, INITIAL_PASSWORD_FILE))).toBe(false);
    expect(d.log).not.toMatch(/created user/);
    expect((await signIn(d, ADMIN_PASSWORD))[0]).toBe(0);
  }, 120_000);

  it('a token a node has not copied yet is looked up in the site once, with its user', async () => {
    const conn = await connectCluster(
      { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD },
      'probe',
    );
    const dir = mkdtempSync(join(tmpdir(), 'vc-site-acc-probe-'));
    const db = openDb(dir);
    try {
      const rows = new AccountsRepository(db);
      // Never started: its watch copies nothing, as a node whose watch stalled.
      const behind = new SiteAccounts(
        (await openSiteStore(conn, 1)).accounts,
        rows,
        pino({ level: 'silent' }),
      );
      const accounts = new Accounts(behind, systemClock);
      const [, token] = await signIn(a, ADMIN_PASSWORD);
      expect(rows.passwordHash('admin')).toBeUndefined();
      const check = await accounts.checkToken(token);
      expect(check).toMatchObject({ ok: true, username: 'admin' });
      // Copied here with its user: the next check is local, and a held answer can be tied to it.
      expect(rows.token((check as { tokenHash: string }).tokenHash)?.username).toBe('admin');
      expect(rows.passwordHash('admin')).toMatch(/^scrypt\$/);
      expect(await accounts.checkToken('y'.repeat(43))).toEqual({ ok: false, reason: 'unknown' });
    } finally {
      db.close();
      await conn.close();
    }
  });

  it('a flood of made-up tokens costs at most MAX_TOKEN_LOOKUPS reads of the site at a time', async () => {
    const conn = await connectCluster(
      { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD },
      'flood',
    );
    const dir = mkdtempSync(join(tmpdir(), 'vc-site-acc-flood-'));
    const db = openDb(dir);
    try {
      const bucket = (await openSiteStore(conn, 1)).accounts;
      let reads = 0;
      // The real bucket, its reads counted.
      const counted = new Proxy(bucket, {
        get(target, name) {
          if (name === 'get')
            return (key: string) => {
              reads += 1;
              return target.get(key);
            };
          const value = Reflect.get(target, name, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const accounts = new Accounts(
        new SiteAccounts(counted, new AccountsRepository(db), pino({ level: 'silent' })),
        systemClock,
      );
      const made = Array.from({ length: 3 * MAX_TOKEN_LOOKUPS }, (_, i) => `${i}`.padStart(43, 'f'));
      const checks = await Promise.all(made.map((token) => accounts.checkToken(token)));
      expect(checks.every((check) => !check.ok)).toBe(true);
      expect(reads).toBe(MAX_TOKEN_LOOKUPS);
    } finally {
      db.close();
      await conn.close();
    }
  });

  it('a node whose watch of the site stalls watches again, and catches up', async () => {
    const conn = await connectCluster(
      { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD },
      'stall',
    );
    const dir = mkdtempSync(join(tmpdir(), 'vc-site-acc-stall-'));
    const db = openDb(dir);
    const bucket = (await openSiteStore(conn, 1)).accounts;
    let watches = 0;
    // The real bucket, but its first watch delivers nothing, as watches did for 11-22 s after a NATS server's loss.
    const stalling = new Proxy(bucket, {
      get(target, name) {
        if (name === 'watch')
          return async (options: Parameters<typeof bucket.watch>[0]) => {
            watches += 1;
            if (watches > 1) return target.watch(options);
            return {
              stop() {},
              [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }),
            } as unknown as Awaited<ReturnType<typeof bucket.watch>>;
          };
        const value = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const rows = new AccountsRepository(db);
    const site = new SiteAccounts(stalling, rows, pino({ level: 'silent' }));
    try {
      await site.start();
      expect(watches).toBe(2);
      expect(rows.passwordHash('admin')).toMatch(/^scrypt\$/);
      // And it follows what happens next: a token signed in on A, then signed out.
      const [, token] = await signIn(a, ADMIN_PASSWORD);
      const accounts = new Accounts(site, systemClock);
      const check = await accounts.checkToken(token);
      expect(check.ok).toBe(true);
      const hash = (check as { tokenHash: string }).tokenHash;
      expect((await call(a, token, 'POST', '/api/auth/logout')).code).toBe(0);
      await eventually('the sign-out copied', () => rows.token(hash) === undefined);
    } finally {
      await site.close();
      db.close();
      await conn.close();
    }
  }, 60_000);

  it("a password changed on one node ends the user's tokens and their held feeds on the others", async () => {
    const [, old] = await signIn(a, ADMIN_PASSWORD);
    const feed = await openFeed(a, old);
    const [, onB] = await signIn(b, ADMIN_PASSWORD);
    const changed = await call(b, onB, 'PUT', '/api/auth/password', {
      current_password: ADMIN_PASSWORD,
      password: 'a-new-site-password-7',
    });
    expect(changed.code, changed.msg).toBe(0);
    await Promise.race([
      feed.ended,
      new Promise((_, fail) => setTimeout(() => fail(new Error('the feed on A did not end')), 20_000)),
    ]);
    expect(feed.open).toBe(false);
    expect(await get(`${a.url}/api/tasks`, old)).toEqual([401, 40102]);
    expect((await signIn(a, ADMIN_PASSWORD))[0]).toBe(40103);
    expect((await signIn(a, 'a-new-site-password-7'))[0]).toBe(0);
  }, 60_000);
});
