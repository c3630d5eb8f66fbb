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
    const beats = [0, 1, 2, 3, 4, 5, 6].map((i) => ({ at: i * BEAT_MS, peer: Math.min(i, 2) }));
    expect(run(beats)).toEqual([0, 0, 0, 1000, 2000, 3000, 4000]);
    expect(run(beats).findIndex((silent) => silent >= LEASE_MS)).toBe(5);
  });

  it('counts no silence for an election that stalls every write, ours too', () => {
    // Our beat at 2 s, then nothing stored until 9 s; the peer renews right after.
    const beats = [
      { at: 0, peer: 1 },
      { at: 1000, peer: 2 },
      { at: 2000, peer: 3 },
      { at: 9000, peer: 3 },
      { at: 9500, peer: 4 },
    ];
    expect(run(beats)).toEqual([0, 0, 0, 1500, 0]);
  });

  it('treats a key never seen as not silent', () => {
    expect(new Liveness().silentFor('nobody')).toBe(0);
  });
});
