/**
 * How an engine joins a cluster (opt-in: without it the engine is the single workstation it always
 * was, with no NATS connection at all). Every node of one site names the same NATS servers.
 */
export interface ClusterOptions {
  /** NATS server URLs (nats://host:port, or tls://host:port between machines), at least one. */
  servers: readonly string[];
  /** This node's NATS user (each node has its own: engine/cluster/nats-users.ts); anonymous access is refused. */
  user: string;
  /** The NATS user's password. */
  password: string;
  /** This node's name in the cluster, unique per site (default: the machine's host name). */
  nodeName?: string;
  /** A PEM file of the CA that signed the NATS servers' certificates, for tls:// servers. */
  caFile?: string;
  /**
   * The URL at which the other nodes reach this node's API (default: http://<host>:<port> as bound),
   * for the routes answered by the node that owns a task.
   */
  advertiseUrl?: string;
  /** Cameras this node takes at most (default: measured CPU capacity decides alone). */
  maxCameras?: number;
  /** Cores' worth of CPU this node gives to cameras (default: its cores less what it keeps back). */
  capacityCores?: number;
}
