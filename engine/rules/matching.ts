import { footOf, pointInPolygon } from '../vision/geometry';
import type { TrackedObject } from '../vision/types';
import { DEFAULT_INERTIA, TrackInertia } from './inertia';
import { withinBounds } from './report';
import type { AppView, Match } from './rule-kind';
import type { ClassEntry } from './schema';
import { masked, zonesAt } from './zones';

function entryMatches(entry: ClassEntry, o: TrackedObject): boolean {
  const longerSide = Math.max(o.x2 - o.x1, o.y2 - o.y1);
  return o.score >= entry.threshold && withinBounds(longerSide, entry.min_pixel, entry.max_pixel);
}

/**
 * Which tracked objects meet their class entry (class, score, size) outside the masks, where their
 * foot point stands (region, zones), and whether their track meets the rule's inertia.
 */
export class Matching {
  private readonly inertia = new TrackInertia();

  match(app: AppView, objects: readonly TrackedObject[]): Match[] {
    const steady = app.perImage
      ? null
      : this.inertia.update(
          objects.map((o) => o.trackId),
          app.rule.inertia ?? DEFAULT_INERTIA,
        );
    const matches: Match[] = [];
    for (const object of objects) {
      const entry = app.entries.get(String(object.classIndex));
      if (!entry || !entryMatches(entry, object)) continue;
      const foot = footOf(object);
      if (masked(foot, app.masks)) continue;
      matches.push({
        object,
        entry,
        foot,
        ...(app.zones.length > 0 && { zones: zonesAt(foot, app.zones) }),
        inRegion: app.region === null || pointInPolygon(foot, app.region),
        steady: steady === null || steady.has(object.trackId),
      });
    }
    return matches;
  }
}
