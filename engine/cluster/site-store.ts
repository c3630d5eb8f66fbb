import { JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { Bucket, KV } from '@nats-io/kv';
import { CLIENT_TIMING, type ClusterConnection } from './connection';

/** The buckets and streams a site keeps in JetStream, each replicated on up to three servers. */
export interface SiteStore {
  /** Node cards: one key per node, rewritten each beat; liveness is judged by revision. */
  nodes: KV;
  /**
   * The same node cards, read from their stream's leader, never from a follower's copy: a follower
   * that lags (catching up while a NATS server died or came back, on a loaded machine) answered a
   * direct read with a card seconds old, and a live node was judged silent and lost its cameras.
   * Liveness reads the cards here.
   */
  nodeCards: KV;
  /** Leases by revision: the placement leader's, under "leader". */
  leases: KV;
  /** Task definitions (the stored task, parsed), one key per task. */
  tasks: KV;
  /** Which node runs each task, and the epoch of that assignment; written by the placement leader. */
  assignments: KV;
  /** How far each task's events were delivered (chain sequence), recorded by the owner. */
  delivery: KV;
  /** Users, tokens (hashes), the stream-token key and shared settings (site-accounts.ts). */
  accounts: Bucket;
}

/** The stream of every task's event chain: subject vc.ev.<task_id>, one message per event or owner change. */
export const EVENTS_STREAM = 'VC_EVENTS';
export const eventSubject = (taskId: string) => `vc.ev.${taskId}`;
/**
 * Whether a task id is one plain subject token, as the engine's ids are: any other names no chain,
 * and must never reach a subject filter, where `*` or `>` would match every task's.
 */
export const chainable = (taskId: string) => /^[A-Za-z0-9_-]+$/.test(taskId);
/** Events a superseded owner still held, handed to the task's current owner: vc.late.<task_id>. */
export const LATE_STREAM = 'VC_LATE';
export const lateSubject = (taskId: string) => `vc.late.${taskId}`;

/** How long a duplicate message id is remembered: an append retried after a failover is stored once. */
const DUPLICATE_WINDOW_NS = 2 * 60 * 1e9;
/** Event chains are kept a week: delivery retries for a day (OUTBOX_DEFAULTS.retryForMs). */
const EVENTS_MAX_AGE_NS = 7 * 24 * 3600 * 1e9;

/** JetStream's answer to a new stream whose replicas it cannot place yet (servers still meeting). */
const NO_SUITABLE_PEERS = 10005;

/** A compare-and-set (kv.update by revision, kv.create) that another writer beat: read again and retry. */
export const lostRace = (error: unknown) =>
  error instanceof JetStreamApiError &&
  (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
    error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);

/**
 * Creates a stream or bucket, again while JetStream cannot place its replicas yet: servers started
 * together know each other's JetStream only some seconds after their meta leader is elected, and a
 * node that starts with them must wait for that, not fail (at most CLIENT_TIMING.jetstreamWaitMs).
 */
export async function whilePlacing<T>(create: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + CLIENT_TIMING.jetstreamWaitMs;
  for (;;) {
    try {
      return await create();
    } catch (error) {
      const unplaced = error instanceof JetStreamApiError && error.code === NO_SUITABLE_PEERS;
      if (!unplaced || Date.now() > deadline) throw error;
      await new Promise((done) => setTimeout(done, 500));
    }
  }
}

/** Opens (creating on first use) the site's buckets and streams with `replicas` copies each. */
export async function openSiteStore(conn: ClusterConnection, replicas: number): Promise<SiteStore> {
  const bucket = (name: string) => whilePlacing(() => conn.kvm.create(name, { replicas, history: 1 }));
  const stream = async (name: string, subjects: string[], maxAgeNs: number, retention: RetentionPolicy) => {
    const config = {
      name,
      subjects,
      num_replicas: replicas,
      storage: StorageType.File,
      retention,
      duplicate_window: DUPLICATE_WINDOW_NS,
      max_age: maxAgeNs,
    };
    try {
      await conn.jsm.streams.info(name);
    } catch {
      await whilePlacing(() => conn.jsm.streams.add(config)).catch(async (error) => {
        // Another node created it meanwhile.
        await conn.jsm.streams.info(name).catch(() => {
          throw error;
        });
      });
    }
  };
  await stream(EVENTS_STREAM, ['vc.ev.>'], EVENTS_MAX_AGE_NS, RetentionPolicy.Limits);
  await stream(LATE_STREAM, ['vc.late.>'], EVENTS_MAX_AGE_NS, RetentionPolicy.Limits);
  const [nodes, leases, tasks, assignments, delivery, accounts] = await Promise.all(
    ['vc_nodes', 'vc_leases', 'vc_tasks', 'vc_assign', 'vc_delivery', 'vc_accounts'].map(bucket),
  );
  return {
    nodes: nodes as KV,
    nodeCards: await conn.kvm.open('vc_nodes', { allow_direct: false }),
    leases: leases as KV,
    tasks: tasks as KV,
    assignments: assignments as KV,
    delivery: delivery as KV,
    // What kvm.create makes: a Bucket (purgeDeletes is not on the KV interface).
    accounts: accounts as Bucket,
  };
}
