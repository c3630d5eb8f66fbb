import { describe, expect, it } from 'vitest';
import { BEAT_MS, LEASE_MS, Liveness } from '../engine/cluster/liveness';

/** Beats of this node at the given wall times, observing peer revisions given per beat. */
function run(beats: Array<{ at: number; peer?: number }>): number[] {
  const liveness = new Liveness();
  return beats.map(({ at, peer }) => {
    liveness.ownBeat(at);
    if (peer !== undefined) liveness.observe('peer', peer);
    return liveness.silentFor('peer');
  });
}

describe('liveness by revision in writable time', () => {
  it('counts a peer silent once its card stops changing while our beats are stored', () => {
    const beats = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => ({ at: i * BEAT_MS, peer: Math.min(i, 2) }));
    expect(run(beats)).toEqual([0, 0, 0, 1, 2, 3, 4, 5, 6, 7].map((n) => n * BEAT_MS));
    // Silent for the lease once six beats of ours were stored after its last change.
    expect(run(beats).findIndex((silent) => silent >= LEASE_MS)).toBe(2 + LEASE_MS / BEAT_MS);
  });

  it('counts no silence for an election that stalls every write, ours too', () => {
    // Our beats every BEAT_MS, then nothing stored for 7 s; the peer renews right after.
    const beats = [
      { at: 0, peer: 1 },
      { at: BEAT_MS, peer: 2 },
      { at: 2 * BEAT_MS, peer: 3 },
      { at: 2 * BEAT_MS + 7000, peer: 3 },
      { at: 3 * BEAT_MS + 7000, peer: 4 },
    ];
    // The stall counts as one and a half beats, never as the 7 s it lasted.
    expect(run(beats)).toEqual([0, 0, 0, 1.5 * BEAT_MS, 0]);
  });

  it('counts no silence while this node cannot read the cards, though its own beats are stored', () => {
    // After a NATS server died: our beats stored every BEAT_MS for 6 s, the cards' listing timing out.
    const liveness = new Liveness();
    liveness.ownBeat(0);
    liveness.observe('peer', 1);
    let most = 0;
    for (let at = BEAT_MS; at <= 6_000; at += BEAT_MS) {
      liveness.ownBeat(at);
      most = Math.max(most, liveness.silentFor('peer'));
    }
    // No news is not silence: nobody looked silent meanwhile (before, 6 s: every peer judged silent).
    expect(most).toBe(0);
    // Read again, the peer had beaten meanwhile: up.
    liveness.ownBeat(6_000 + BEAT_MS);
    liveness.observe('peer', 13);
    expect(liveness.silentFor('peer')).toBe(0);
  });

  it('counts the whole store-up time as silence once a read shows a card that did not change', () => {
    // The same outage of our reads, but the peer was frozen: its card is where it was 6 s ago.
    const liveness = new Liveness();
    liveness.ownBeat(0);
    liveness.observe('peer', 1);
    for (let at = BEAT_MS; at <= 6_000; at += BEAT_MS) liveness.ownBeat(at);
    liveness.observe('peer', 1);
    expect(liveness.silentFor('peer')).toBe(6_000);
    expect(liveness.silentFor('peer')).toBeGreaterThan(LEASE_MS);
  });

  it('judges nobody silent through a store out for longer than the lease, writes and reads alike', () => {
    const liveness = new Liveness();
    liveness.ownBeat(0);
    liveness.observe('peer', 1);
    // 10 s with nothing stored or read (no quorum), then both come back and the peer's card changed.
    liveness.ownBeat(10_000);
    expect(liveness.silentFor('peer')).toBe(0);
    liveness.observe('peer', 2);
    expect(liveness.silentFor('peer')).toBe(0);
    // Had its card not changed, the outage would count as one and a half beats, under the lease.
    const frozen = new Liveness();
    frozen.ownBeat(0);
    frozen.observe('peer', 1);
    frozen.ownBeat(10_000);
    frozen.observe('peer', 1);
    expect(frozen.silentFor('peer')).toBe(1.5 * BEAT_MS);
  });

  it('treats a key never seen as not silent', () => {
    expect(new Liveness().silentFor('nobody')).toBe(0);
  });
});
