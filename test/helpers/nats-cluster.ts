import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { engineUsersConf, type NodeUser } from '../../engine/cluster/nats-users';
import { eventually } from './eventually';
import { LocalServer } from './local-server';
import { freePorts } from './rtmp-source';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The tests' own clients' user (anonymous access is off): a node's permissions for every node name
 * (`*`), so a test may play any node. Engines connect as a user of their own (NatsCluster.nodeUser),
 * with their node's permissions only, as a site is deployed.
 */
export const NATS_USER = 'vc-test';
export const NATS_PASSWORD = 'test-nats-password';
const TEST_USER: NodeUser = { node: '*', user: NATS_USER, password: NATS_PASSWORD };
/** The routes between the servers authenticate too, as another user. */
const ROUTE_USER = 'vc-route';
const ROUTE_PASSWORD = 'test-route-password';

/**
 * The NATS server binary at or above the cluster's floor: VC_NATS_SERVER (what scripts/test.sh sets),
 * else what scripts/nats-server.sh finds or fetches from Debian. Throws when there is none: the
 * cluster tests fail, never skip, on a machine without it.
 */
export function natsServerBinary(): string {
  if (process.env.VC_NATS_SERVER) return process.env.VC_NATS_SERVER;
  const found = execFileSync('bash', [join(ROOT, 'scripts/nats-server.sh')], { encoding: 'utf8' }).trim();
  process.env.VC_NATS_SERVER = found;
  return found;
}

/** A server's JetStream meta group (/jsz meta_cluster): replicas are listed by the leader only. */
interface MetaGroup {
  leader?: string;
  cluster_size: number;
  replicas?: Array<{ name: string; current: boolean }>;
}

/** One server of a test cluster: JetStream on, its store in its own folder, loopback only. */
export class NatsServer extends LocalServer {
  private output = '';

  constructor(
    private readonly binary: string,
    dir: string,
    port: number,
    readonly name: string,
    /** Its monitoring port (loopback): /healthz says when its JetStream is ready. */
    private readonly monitorPort: number,
  ) {
    super(dir, port);
  }

  /**
   * Whether its JetStream is ready for a site of `size` servers: it knows the meta leader and is
   * current with it (/healthz), and its meta group has every server in it (/jsz; the leader's
   * replicas all current). /healthz alone answers 200 while the group has 2 of 3 (measured), when an
   * R3 stream is refused "no suitable peers".
   */
  async jetstreamReady(size: number): Promise<boolean> {
    const get = (path: string) =>
      fetch(`http://127.0.0.1:${this.monitorPort}${path}`, { signal: AbortSignal.timeout(2_000) }).catch(
        () => null,
      );
    if ((await get('/healthz'))?.status !== 200) return false;
    if (size === 1) return true;
    // A body cut short reads as not ready yet, as a refused fetch does.
    const jsz = (await (await get('/jsz'))?.json().catch(() => undefined)) as
      | { meta_cluster?: MetaGroup }
      | undefined;
    const meta = jsz?.meta_cluster;
    this.meta = meta ?? null;
    if (meta?.cluster_size !== size) return false;
    return (
      !meta.replicas || (meta.replicas.length === size - 1 && meta.replicas.every((peer) => peer.current))
    );
  }

  /** Its meta group as its last readiness check read it: said when the cluster never gets ready. */
  meta: MetaGroup | null = null;

  private tls = false;

  get url(): string {
    return `${this.tls ? 'tls' : 'nats'}://127.0.0.1:${this.port}`;
  }

  get log(): string {
    return this.output;
  }

  /** Starts (or starts again, keeping its store) this server. */
  start(): Promise<void> {
    return this.run();
  }

  /** When the server last read its configuration (from its monitoring port). */
  async configLoadTime(): Promise<string | undefined> {
    const answer = await fetch(`http://127.0.0.1:${this.monitorPort}/varz`, {
      signal: AbortSignal.timeout(2_000),
    }).catch(() => null);
    return answer?.ok ? ((await answer.json()) as { config_load_time: string }).config_load_time : undefined;
  }

  /** Gives the servers these users, as the site's `npm run cluster -- nats-users` writes them. */
  writeUsers(users: readonly NodeUser[]): void {
    writeFileSync(join(this.dir, 'engine-users.conf'), engineUsersConf(users));
  }

  protected spawnServer(): ChildProcess {
    const child = spawn(this.binary, ['-c', join(this.dir, 'nats.conf')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      // Kept short: a long-running server logs every election.
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    return child;
  }

  /**
   * Writes the configuration: client auth with a user per node as deployed (engine-users.conf, see
   * writeUsers), route auth, JetStream with a store of `storeMb`, and TLS for clients when a
   * certificate is given.
   */
  configure(
    clusterPort: number,
    routes: readonly number[],
    storeMb: number,
    tls?: { certFile: string; keyFile: string },
  ): void {
    mkdirSync(join(this.dir, 'store'), { recursive: true });
    this.writeUsers([TEST_USER]);
    this.tls = tls !== undefined;
    const routeUrls = routes.map((port) => `"nats://${ROUTE_USER}:${ROUTE_PASSWORD}@127.0.0.1:${port}"`);
    writeFileSync(
      join(this.dir, 'nats.conf'),
      [
        `server_name: ${this.name}`,
        `listen: 127.0.0.1:${this.port}`,
        `http: 127.0.0.1:${this.monitorPort}`,
        `jetstream { store_dir: "${join(this.dir, 'store')}", max_memory_store: 64MB, max_file_store: ${storeMb}MB }`,
        // One server alone is no cluster: JetStream refuses a cluster block without routes.
        ...(routes.length === 0
          ? []
          : [
              'cluster {',
              '  name: vc-test',
              `  listen: 127.0.0.1:${clusterPort}`,
              `  authorization { user: ${ROUTE_USER}, password: ${ROUTE_PASSWORD} }`,
              `  routes: [${routeUrls.join(', ')}]`,
              '}',
            ]),
        ...(tls ? [`tls { cert_file: "${tls.certFile}", key_file: "${tls.keyFile}" }`] : []),
        'include engine-users.conf',
      ].join('\n'),
    );
  }
}

/** The clusters running, by each server's URL: a SiteEngine knows its cluster by the URLs it joins. */
const running = new Map<string, NatsCluster>();

/** The NATS user of the node `node` of the cluster serving `servers` (made when it has none yet). */
export function nodeUserOf(servers: readonly string[], node: string): Promise<NodeUser> {
  const cluster = running.get(servers[0] ?? '');
  if (!cluster) throw new Error(`no test NATS cluster serves ${servers.join(', ')}`);
  return cluster.nodeUser(node);
}

/** Three (or `size`) NATS servers clustered on loopback, each with JetStream: a site's control plane. */
export class NatsCluster {
  private readonly users: NodeUser[] = [TEST_USER];

  private constructor(readonly servers: NatsServer[]) {
    for (const url of this.urls) running.set(url, this);
  }

  /**
   * The NATS user of a node, its permissions its node's alone: a node started for the first time
   * gets one on every server (written, and the servers reload their configuration).
   */
  async nodeUser(node: string): Promise<NodeUser> {
    const known = this.users.find((user) => user.node === node);
    if (known) return known;
    const user = { node, user: node, password: `test-${node}-password` };
    this.users.push(user);
    const loaded = await Promise.all(this.servers.map((server) => server.configLoadTime()));
    for (const server of this.servers) {
      server.writeUsers(this.users);
      server.signal('SIGHUP');
    }
    await eventually(
      `NATS servers reloaded with the user of ${node}`,
      async () =>
        // A server that is down now reads the file when it starts again.
        (await Promise.all(this.servers.map((server) => server.configLoadTime()))).every(
          (time, i) => loaded[i] === undefined || (time !== undefined && time !== loaded[i]),
        ),
      20_000,
      50,
    );
    return user;
  }

  static async start(
    size = 3,
    storeMb = 256,
    tls?: { certFile: string; keyFile: string },
  ): Promise<NatsCluster> {
    const binary = natsServerBinary();
    const all = await freePorts(3 * size);
    const ports = all.slice(0, size);
    const clusterPorts = all.slice(size, 2 * size);
    const monitorPorts = all.slice(2 * size);
    const servers = ports.map((port, i) => {
      const dir = mkdtempSync(join(tmpdir(), `vc-nats-${i}-`));
      const server = new NatsServer(binary, dir, port, `n${i + 1}`, monitorPorts[i] as number);
      server.configure(
        clusterPorts[i] as number,
        clusterPorts.filter((_, j) => j !== i),
        storeMb,
        tls,
      );
      return server;
    });
    await Promise.all(servers.map((server) => server.start()));
    // Servers started together agree on JetStream's meta leader seconds later (longer on a loaded
    // machine): a test begins once every server is current with it, so that replicas can be placed.
    await eventually(
      'JetStream ready on every NATS server',
      async () => (await Promise.all(servers.map((server) => server.jetstreamReady(size)))).every(Boolean),
      // Within the tests' 60 s setup, so that a group that never forms is said with each server's log.
      45_000,
      250,
    ).catch((error: Error) => {
      const said = servers.map(
        (server) => `${server.name}: ${JSON.stringify(server.meta)}\n${server.log.slice(-2_000)}`,
      );
      throw new Error(`${error.message}\n${said.join('\n')}`);
    });
    return new NatsCluster(servers);
  }

  get urls(): string[] {
    return this.servers.map((server) => server.url);
  }

  async dispose(): Promise<void> {
    for (const url of this.urls) running.delete(url);
    await Promise.all(this.servers.map((server) => server.dispose()));
  }
}
