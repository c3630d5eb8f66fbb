import { FORGET_TRACK_AFTER_MS } from './time-series';

/**
 * Left objects: a still object (a bag, a suitcase) with nobody near. It is left from the later of
 * when it stopped moving and when a person was last near it, so a bag set down beside someone who
 * then walks away counts from their leaving, not from when it was set down.
 */

export interface LeftSighting {
  trackId: string;
  /** Frame time the object's current stop began; undefined while it is not stationary. */
  stillSinceMs: number | undefined;
  /** A person stands near it in this frame. */
  attended: boolean;
  /** Only confirmed, steady tracks fire. */
  confirmed: boolean;
}

interface Watch {
  lastAttendedMs: number;
  lastSeenMs: number;
  fired: boolean;
}

export class LeftObjects {
  private readonly watched = new Map<string, Watch>();

  /**
   * Returns, for each sighted object that is left now, since how many ms; `firing` lists those that
   * reached `afterMs` for the first time (each object fires once).
   */
  update(
    nowMs: number,
    afterMs: number,
    sightings: readonly LeftSighting[],
  ): { leftMs: Map<string, number>; firing: Set<string> } {
    for (const [trackId, watch] of this.watched) {
      if (nowMs - watch.lastSeenMs > FORGET_TRACK_AFTER_MS) this.watched.delete(trackId);
    }
    const leftMs = new Map<string, number>();
    const firing = new Set<string>();
    for (const { trackId, stillSinceMs, attended, confirmed } of sightings) {
      const watch = this.watched.get(trackId) ?? {
        lastAttendedMs: -Infinity,
        lastSeenMs: nowMs,
        fired: false,
      };
      this.watched.set(trackId, watch);
      watch.lastSeenMs = nowMs;
      if (attended) watch.lastAttendedMs = nowMs;
      if (stillSinceMs === undefined || attended) continue;
      const left = nowMs - Math.max(stillSinceMs, watch.lastAttendedMs);
      leftMs.set(trackId, left);
      if (confirmed && left >= afterMs && !watch.fired) {
        watch.fired = true;
        firing.add(trackId);
      }
    }
    return { leftMs, firing };
  }
}
