import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientTls } from '../engine/cluster/client-tls';
import { type ClusterConnection, ClusterRefused, connectCluster } from '../engine/cluster/connection';
import {
  EVENTS_STREAM,
  eventSubject,
  LATE_STREAM,
  lateSubject,
  openSiteStore,
} from '../engine/cluster/site-store';
import { type Site, SiteEngine, siteOf } from './helpers/cluster-engines';
import { eventually, settled } from './helpers/eventually';
import { NATS_PASSWORD, NATS_USER, NatsCluster, natsServerBinary, nodeUserOf } from './helpers/nats-cluster';
import { makeTestCertificates, type TestCertificates } from './helpers/tls-certs';

describe('which servers a node reaches over TLS only', () => {
  const tls = (...servers: string[]) => clientTls({ servers });
  it('lets plain TCP reach loopback alone, and asks TLS of every server once one needs it', () => {
    expect([
      tls('nats://127.0.0.1:4222'),
      tls('nats://localhost:4222', '127.0.0.2:4223'),
      tls('nats://[::1]:4222'),
      tls('nats://10.0.0.5:4222'),
      tls('nats-1.site:4222'),
      tls('nats://127.0.0.1:4222', 'nats://nats-2.site:4222'),
      tls('tls://127.0.0.1:4222'),
      tls('nats://127.evil.example:4222'),
      clientTls({ servers: ['nats://127.0.0.1:4222'], caFile: '/etc/ca.pem' }),
    ]).toEqual([undefined, undefined, undefined, {}, {}, {}, {}, {}, { caFile: '/etc/ca.pem' }]);
  });
});

// One real NATS server with TLS for clients, its certificate signed by a CA made for the test.
describe('a site on TLS, with the engines permissions as deployed', () => {
  let certs: TestCertificates;
  let nats: NatsCluster;
  let plain: NatsCluster;
  const connections: ClusterConnection[] = [];
  const options = () => ({
    servers: nats.urls,
    user: NATS_USER,
    password: NATS_PASSWORD,
    caFile: certs.caFile,
  });

  beforeAll(async () => {
    certs = makeTestCertificates();
    [nats, plain] = await Promise.all([
      NatsCluster.start(1, 64, { certFile: certs.certFile, keyFile: certs.keyFile }),
      NatsCluster.start(1, 64),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(connections.map((conn) => conn.close()));
    await Promise.all([nats?.dispose(), plain?.dispose()]);
  });

  it('joins a TLS server whose certificate the CA signed, and refuses one it did not sign', async () => {
    expect(nats.urls[0]).toMatch(/^tls:\/\//);
    const conn = await connectCluster(options(), 'trusting');
    connections.push(conn);
    expect(conn.nc.info?.tls_required).toBe(true);
    const stranger = await connectCluster({ ...options(), caFile: certs.strangerCaFile }, 'stranger').catch(
      (error: Error) => error,
    );
    expect(stranger).toBeInstanceOf(ClusterRefused);
    expect((stranger as Error).message).toMatch(/certificate/i);
  });

  it('refuses a server that offers no TLS when TLS is asked for, and sends it no password', async () => {
    const port = new URL(plain.urls[0] as string).port;
    const refused = await connectCluster(
      { servers: [`tls://127.0.0.1:${port}`], user: NATS_USER, password: NATS_PASSWORD },
      'downgraded',
    ).catch((error: Error) => error);
    expect(refused).toBeInstanceOf(ClusterRefused);
    expect((refused as Error).message).toMatch(/does not support 'tls'/);
  });

  it("lets the engines' user work the site's streams but never delete or purge the event chains", async () => {
    const conn = await connectCluster(options(), 'member');
    connections.push(conn);
    await openSiteStore(conn, 1);
    await conn.js.publish(eventSubject('t-1'), 'one');
    const denied = async (work: () => Promise<unknown>) =>
      work().then(
        () => 'allowed',
        (error: Error) => error.message,
      );
    const refusals = await Promise.all([
      denied(() => conn.jsm.streams.delete(EVENTS_STREAM)),
      denied(() => conn.jsm.streams.purge(EVENTS_STREAM)),
      denied(() => conn.jsm.streams.deleteMessage(EVENTS_STREAM, 1)),
      denied(() => conn.jsm.streams.update(EVENTS_STREAM, { max_age: 1e9 })),
    ]);
    for (const refusal of refusals) expect(refusal).toMatch(/permission/i);
    expect((await conn.jsm.streams.info(EVENTS_STREAM)).state.messages).toBe(1);
    // What the engines do need: taking a late event off the hand-over queue once it is chained.
    const late = await conn.js.publish(lateSubject('t-1'), 'held');
    expect(await conn.jsm.streams.deleteMessage(LATE_STREAM, late.seq, false)).toBe(true);
  });

  it('runs an engine joined over TLS with --cluster-ca', async () => {
    const engine = new SiteEngine(
      'tls-node',
      mkdtempSync(join(tmpdir(), 'vc-site-tls-')),
      nats.urls,
      [],
      {},
      ['--cluster-ca', certs.caFile],
    );
    try {
      await engine.start();
      const site: Site = await settled('the node in its site', async () => {
        const seen = await siteOf(engine);
        if (!seen.nodes.some((node) => node.state === 'up')) throw new Error('no node up yet');
        return seen;
      });
      expect(site.nodes.map((node) => [node.node, node.state])).toEqual([['tls-node', 'up']]);
      expect(engine.log).not.toMatch(/permission/i);
    } finally {
      await engine.stop();
      engine.dispose();
    }
  }, 60_000);
});

// One real NATS server with a user per node, as `npm run cluster -- nats-users` writes them.
describe("a node's own NATS user", () => {
  let nats: NatsCluster;
  const connections: ClusterConnection[] = [];
  const join = async (node: string) => {
    const { user, password } = await nodeUserOf(nats.urls, node);
    const conn = await connectCluster({ servers: nats.urls, user, password }, node);
    connections.push(conn);
    return conn;
  };
  const outcome = (work: () => Promise<unknown>) =>
    work().then(
      () => 'allowed',
      (error: Error) => error.message,
    );

  beforeAll(async () => {
    nats = await NatsCluster.start(1, 64);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(connections.map((conn) => conn.close()));
    await nats?.dispose();
  });

  it("writes its own node card and never another node's", async () => {
    // One after the other: adding node-b's user reloads the server, and a reload rejects a client
    // still in its handshake ("authentication error - User \"\"" in the server's log), which failed
    // node-a's join when both ran at once (CI, under load).
    const a = await join('node-a');
    const b = await join('node-b');
    const [siteA, siteB] = await Promise.all([openSiteStore(a, 1), openSiteStore(b, 1)]);
    await siteA.nodes.put('node-a', '{"by":"a"}');
    await siteB.nodes.put('node-b', '{"by":"b"}');
    const refusals = await Promise.all([
      outcome(() => siteA.nodes.put('node-b', '{"by":"a"}')),
      outcome(() => siteA.nodes.create('node-c', '{"by":"a"}')),
      outcome(() => siteA.nodes.delete('node-b')),
      outcome(() => siteA.nodes.purge('node-b')),
      outcome(() => a.jsm.streams.purge('KV_vc_nodes', { filter: '$KV.vc_nodes.node-b' })),
      outcome(() => a.jsm.streams.deleteMessage('KV_vc_nodes', 2)),
    ]);
    for (const refusal of refusals) expect(refusal).toMatch(/permission/i);
    expect((await siteB.nodes.get('node-b'))?.string()).toBe('{"by":"b"}');
    expect(await siteB.nodes.get('node-c')).toBeNull();
    // What every node writes stays open to it: the shared buckets.
    await siteA.tasks.put('t-1', '{}');
    expect((await siteB.tasks.get('t-1'))?.string()).toBe('{}');
  });

  it('answers its own request subjects and cannot answer as another node', async () => {
    const a = await join('node-a');
    const b = await join('node-b');
    // The refusal of a subscription comes to its callback.
    const answer = (conn: ClusterConnection, subject: string, reply: string) =>
      new Promise<string>((refused) =>
        conn.nc.subscribe(subject, {
          callback: (error, message) => {
            if (error) refused(error.message);
            else message.respond(reply);
          },
        }),
      );
    const impostor = answer(a, 'vc.node.node-b.api', 'from a');
    const widely = answer(a, 'vc.node.*.api', 'from a');
    answer(b, 'vc.node.node-b.api', 'from b');
    answer(a, 'vc.node.node-a.api', 'a itself');
    expect(await impostor).toMatch(/permission/i);
    expect(await widely).toMatch(/permission/i);
    // Interest in a subject reaches the site's other servers a moment after a subscription: until
    // then a request finds no responders.
    await Promise.all([a.nc.flush(), b.nc.flush()]);
    await eventually('node-b answering', () =>
      a.nc.request('vc.node.node-b.api', '', { timeout: 5_000 }).then(
        () => true,
        () => false,
      ),
    );
    await eventually('node-a answering', () =>
      b.nc.request('vc.node.node-a.api', '', { timeout: 5_000 }).then(
        () => true,
        () => false,
      ),
    );
    const asked = await Promise.all(
      Array.from({ length: 5 }, () => a.nc.request('vc.node.node-b.api', '', { timeout: 5_000 })),
    );
    expect(asked.map((message) => message.string())).toEqual(Array(5).fill('from b'));
    expect((await b.nc.request('vc.node.node-a.api', '', { timeout: 5_000 })).string()).toBe('a itself');
    // Its delivery news goes out under its own name only.
    const heard: string[] = [];
    b.nc.subscribe('vc.delivery.*', {
      callback: (_, message) => {
        heard.push(message.subject);
      },
    });
    await b.nc.flush();
    // Sent again until heard, for the same reason; the forged news goes first each time.
    await eventually('the delivery news heard', async () => {
      a.nc.publish('vc.delivery.node-b', 'forged');
      a.nc.publish('vc.delivery.node-a', 'own');
      await a.nc.flush();
      return heard.length > 0;
    });
    expect(new Set(heard)).toEqual(new Set(['vc.delivery.node-a']));
  });
});

describe('npm run cluster -- nats-users', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'engine/cluster/cli.ts', 'nats-users', ...args], {
      encoding: 'utf8',
    });

  it("writes the servers' users, which a NATS server takes, and each node's password, readable by its owner only", () => {
    const out = join(mkdtempSync(join(tmpdir(), 'vc-users-')), 'site-users');
    const written = run('--out', out, 'line-1', 'line-2', 'line-3');
    expect(written.status, written.stderr).toBe(0);
    const passwords = ['line-1', 'line-2', 'line-3'].map((node) =>
      readFileSync(join(out, `${node}.password`), 'utf8').trim(),
    );
    expect(new Set(passwords).size).toBe(3);
    for (const password of passwords) expect(password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const conf = readFileSync(join(out, 'engine-users.conf'), 'utf8');
    expect(conf).toContain(`{ user: "line-2", password: "${passwords[1]}"`);
    expect(conf).toContain('"$KV.vc_nodes.line-3"');
    for (const file of ['engine-users.conf', 'line-1.password'])
      expect(statSync(join(out, file)).mode & 0o777).toBe(0o600);
    writeFileSync(join(out, 'nats.conf'), 'listen: 127.0.0.1:-1\ninclude engine-users.conf\n');
    const tested = spawnSync(natsServerBinary(), ['-t', '-c', join(out, 'nats.conf')], { encoding: 'utf8' });
    expect(tested.status, tested.stderr + tested.stdout).toBe(0);
  });

  it('refuses a name that is no node name, a node named twice, and no folder', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'vc-users-')), 'site-users');
    const refusals = [
      run('--out', out, 'line-1', 'line 2'),
      run('--out', out, 'line-1', 'line-1'),
      run('--out', out, 'node.>'),
      run('line-1'),
    ];
    expect(refusals.map((refused) => refused.status)).toEqual([2, 2, 2, 2]);
    expect(refusals[0]?.stderr).toMatch(/"line 2" is no node name/);
    expect(() => statSync(out)).toThrow();
  });
});
