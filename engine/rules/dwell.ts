import { VISIT_GAP_MS } from './time-series';

/**
 * How long each track has stood in each of a set of named areas (the app's region, its zones):
 * a stay starts at the track's first sighting inside, ends when it is seen outside or unseen for
 * longer than a loitering visit may pause, and starts again afterwards.
 */
export class AreaDwell {
  /** Per track, per area it stands in, when its stay began. */
  private readonly stays = new Map<string, { lastSeenMs: number; sinceMs: Map<string, number> }>();

  /** Records this frame's sightings (each with the areas its foot point lies in); returns the stays in ms. */
  update(
    nowMs: number,
    sightings: readonly { trackId: string; areas: readonly string[] }[],
  ): Map<string, Map<string, number>> {
    for (const [trackId, track] of this.stays) {
      if (nowMs - track.lastSeenMs > VISIT_GAP_MS) this.stays.delete(trackId);
    }
    const dwell = new Map<string, Map<string, number>>();
    for (const { trackId, areas } of sightings) {
      const before = this.stays.get(trackId)?.sinceMs;
      const sinceMs = new Map(areas.map((area) => [area, before?.get(area) ?? nowMs]));
      this.stays.set(trackId, { lastSeenMs: nowMs, sinceMs });
      dwell.set(trackId, new Map([...sinceMs].map(([area, since]) => [area, nowMs - since])));
    }
    return dwell;
  }
}

/** Seconds to one decimal, as events carry them. */
export const seconds = (ms: number) => Math.round(ms / 100) / 10;
