/**
 * How often a node rewrites its card (its heartbeat). Writable time advances a beat at a time, so a
 * short beat sees a silent node soon after its lease: 2 KV writes a second per node.
 */
export const BEAT_MS = 500;
/**
 * How long a node's card may stay unchanged, in time the store was writable, before its node counts
 * as frozen or cut off and its cameras move. Six beats: a late beat or two on a loaded machine is not
 * a failure.
 */
export const LEASE_MS = 3_000;
/** What one beat of this node's own can add to writable time, however long it took to be stored. */
const MAX_CREDIT_MS = 1.5 * BEAT_MS;

/**
 * Judges other nodes' heartbeats by the revision of their cards, counting only time during which this
 * node's own beats were stored. While the NATS servers elect a new leader (4-9 s, measured) nobody's
 * beat is stored and nobody's lease runs out: an election moves no camera. A frozen node's card stops
 * changing while the others' beats go on, and it is judged silent after LEASE_MS of that.
 *
 * Silence is counted up to this node's last read of the key, never beyond: no news is not silence.
 * After a NATS server died, a node's beats were stored for seconds while its reads of the cards timed
 * out (listing the keys waits for JetStream's new meta leader); the cards it could not read counted as
 * unchanged, and its GET /api/cluster showed every other node silent. Once the key is read again, a
 * revision that did not change in all that writable time is silence indeed.
 */
export class Liveness {
  private writableMs = 0;
  private lastOwnBeat?: number;
  /** Per key: its revision, the writable time it last changed at, and the writable time it was last read at. */
  private readonly seen = new Map<string, { revision: number; at: number; readAt: number }>();

  /** This node's own beat was stored at `now` (wall-clock ms). */
  ownBeat(now: number): void {
    if (this.lastOwnBeat !== undefined) this.writableMs += Math.min(now - this.lastOwnBeat, MAX_CREDIT_MS);
    this.lastOwnBeat = now;
  }

  /** A key (a node's card, a lease) was read at this revision. */
  observe(key: string, revision: number): void {
    const last = this.seen.get(key);
    if (!last || last.revision !== revision)
      this.seen.set(key, { revision, at: this.writableMs, readAt: this.writableMs });
    else last.readAt = this.writableMs;
  }

  /** Writable time from the key's last change to its last read; 0 for a key never observed. */
  silentFor(key: string): number {
    const last = this.seen.get(key);
    return last ? last.readAt - last.at : 0;
  }

  forget(key: string): void {
    this.seen.delete(key);
  }
}
