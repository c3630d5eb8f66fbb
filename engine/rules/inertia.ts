import type { Inertia } from './schema';

/** Used when a rule sets no `inertia`: a track counts from its 3rd sighting within 5 analysed frames. */
export const DEFAULT_INERTIA: Readonly<Inertia> = { hits: 3, frames: 5 };

/**
 * Which tracks were matched in at least `hits` of the last `frames` analysed frames, so that a
 * detection flickering for a frame or two never alarms. Feed it every analysed frame in order.
 */
export class TrackInertia {
  /** Per track, bit i set when it was matched i frames ago (bit 0: this frame). */
  private readonly history = new Map<string, number>();

  /** Records this frame's matched tracks; returns those that now meet `inertia`. */
  update(trackIds: Iterable<string>, inertia: Inertia): Set<string> {
    const window = 2 ** inertia.frames - 1;
    const present = new Set(trackIds);
    for (const [trackId, bits] of this.history) {
      // A track unseen for a whole window can no longer count: forgetting it bounds memory.
      const shifted = (bits << 1) & window;
      if (shifted === 0 && !present.has(trackId)) this.history.delete(trackId);
      else this.history.set(trackId, shifted);
    }
    const steady = new Set<string>();
    for (const trackId of present) {
      const bits = (this.history.get(trackId) ?? 0) | 1;
      this.history.set(trackId, bits);
      if (hitCount(bits) >= inertia.hits) steady.add(trackId);
    }
    return steady;
  }
}

function hitCount(bits: number): number {
  let count = 0;
  for (let rest = bits; rest !== 0; rest &= rest - 1) count++;
  return count;
}
