import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { clientTls } from './client-tls';
import type { ClusterOptions } from './options';
import { belowFloor, NATS_SERVER_FLOOR } from './server-floor';

/**
 * Client timings, measured against a frozen server (SIGSTOP: the kernel still accepts its TCP): with
 * the default ping (2 min) a client stayed on it; a ping each second, two unanswered, and a connect
 * timeout of 1.5 s moved it to another server in 6-7 s.
 */
export const CLIENT_TIMING = {
  pingIntervalMs: 1_000,
  maxPingOut: 2,
  connectTimeoutMs: 1_500,
  reconnectWaitMs: 250,
  /** A JetStream request (KV write, append) waits this long before it counts as timed out. */
  requestTimeoutMs: 2_000,
  /**
   * Consecutive timed-out requests after which the client leaves its server: one whose store disk
   * is full kept answering pings while its JetStream API hung.
   */
  timeoutsBeforeLeaving: 3,
  /**
   * How long a starting node waits for JetStream to answer, and to place its replicas: servers
   * started together elect their meta leader first (seconds), and a node may start while they do.
   * On a loaded machine placement took longer than 30 s after every server said it was ready
   * (/healthz): a node that gave up then exited, where it needed only to wait.
   */
  jetstreamWaitMs: 90_000,
} as const;

/** One node's connection to the site's NATS servers, with JetStream and KV on it. */
export interface ClusterConnection {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kvm: Kvm;
  /** The version of the server this client first connected to. */
  serverVersion: string;
  /** Counts a JetStream request that timed out; after several in a row, moves to another server. */
  timedOut(): void;
  /** A JetStream request was answered: the count of timeouts starts again. */
  answered(): void;
  close(): Promise<void>;
}

export class ClusterRefused extends Error {}

/**
 * Connects as the cluster's user (anonymous access is refused before any socket opens) and refuses a
 * server below the floor, read from the server's own INFO at connect.
 */
export async function connectCluster(
  options: ClusterOptions,
  name: string,
  floor: string = NATS_SERVER_FLOOR,
): Promise<ClusterConnection> {
  if (options.servers.length === 0) throw new ClusterRefused('cluster: no NATS server named');
  if (!options.user || !options.password)
    throw new ClusterRefused('cluster: a NATS user and password are required (anonymous access is refused)');
  const nc = await connect({
    servers: [...options.servers],
    user: options.user,
    pass: options.password,
    name,
    tls: clientTls(options),
    pingInterval: CLIENT_TIMING.pingIntervalMs,
    maxPingOut: CLIENT_TIMING.maxPingOut,
    timeout: CLIENT_TIMING.connectTimeoutMs,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: CLIENT_TIMING.reconnectWaitMs,
  }).catch((error: Error) => {
    // Named, so the start's refusal says which servers and why (a wrong password, no TLS offered, an untrusted certificate).
    throw new ClusterRefused(`cluster: cannot join through ${options.servers.join(', ')}: ${error.message}`);
  });
  const serverVersion = nc.info?.version ?? '';
  if (belowFloor(serverVersion, floor)) {
    await nc.close();
    throw new ClusterRefused(
      `cluster: NATS server ${nc.getServer()} is version ${serverVersion || 'unknown'}, below ${floor}: ` +
        'its compare-and-set is not safe when writers race (docs/cluster.md)',
    );
  }
  const jsm = await jetstreamReady(nc);
  const js = jetstream(nc, { timeout: CLIENT_TIMING.requestTimeoutMs });
  let timeouts = 0;
  return {
    nc,
    js,
    jsm,
    kvm: new Kvm(js),
    serverVersion,
    timedOut() {
      timeouts += 1;
      if (timeouts < CLIENT_TIMING.timeoutsBeforeLeaving) return;
      timeouts = 0;
      void nc.reconnect().catch(() => undefined);
    },
    answered() {
      timeouts = 0;
    },
    async close() {
      await nc.drain().catch(() => nc.close());
    },
  };
}

/** JetStream's manager once the servers' JetStream answers; refused after CLIENT_TIMING.jetstreamWaitMs. */
async function jetstreamReady(nc: NatsConnection): Promise<JetStreamManager> {
  const deadline = Date.now() + CLIENT_TIMING.jetstreamWaitMs;
  for (;;) {
    try {
      return await jetstreamManager(nc, { timeout: CLIENT_TIMING.requestTimeoutMs });
    } catch (error) {
      if (Date.now() > deadline) {
        await nc.close();
        throw new ClusterRefused(
          `cluster: JetStream did not answer within ${CLIENT_TIMING.jetstreamWaitMs / 1000} s: ${(error as Error).message}`,
        );
      }
      await new Promise((done) => setTimeout(done, 250));
    }
  }
}
