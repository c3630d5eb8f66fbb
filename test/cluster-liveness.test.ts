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

  it('treats a key never seen as not silent', () => {
    expect(new Liveness().silentFor('nobody')).toBe(0);
  });
});
