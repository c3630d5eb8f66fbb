import { pointInPolygon } from '../vision/geometry';
import type { Point } from '../vision/types';
import type { ZoneOccupancy } from './counts';
import type { ZoneArea } from './rule-kind';
import { FlowTally } from './time-series';

/**
 * Named zones and exclusion masks of an app (extensions of app_configs): which zones a foot point
 * stands in, whether a mask hides it, and counts split per zone.
 */

/** A zone as counts name it. */
type Named = { name: string };

/** True when the foot point lies in one of the masks: the object then counts for no rule of the app. */
export function masked(foot: Point, masks: readonly (readonly Point[])[]): boolean {
  return masks.some((mask) => pointInPolygon(foot, mask));
}

/** Names of the zones the foot point stands in, in configuration order. */
export function zonesAt(foot: Point, zones: readonly ZoneArea[]): string[] {
  return zones.filter((zone) => pointInPolygon(foot, zone.polygon)).map((zone) => zone.name);
}

/** How many of the objects stand in each zone; every zone is listed, zeros included. */
export function countPerZone(
  zones: readonly Named[],
  objects: readonly { zones?: readonly string[] }[],
): Record<string, number> {
  return Object.fromEntries(
    zones.map((zone) => [zone.name, objects.filter((o) => o.zones?.includes(zone.name)).length]),
  );
}

/** How many of the objects stand in each zone now, in all and per class id; every zone and class listed. */
export function occupancy(
  zones: readonly Named[],
  classIds: readonly string[],
  objects: readonly { class_id: string; zones?: readonly string[] }[],
): ZoneOccupancy {
  return Object.fromEntries(
    zones.map((zone) => {
      const inside = objects.filter((o) => o.zones?.includes(zone.name));
      const classes = Object.fromEntries(
        classIds.map((classId) => [classId, inside.filter((o) => o.class_id === classId).length]),
      );
      return [zone.name, { count: inside.length, classes }];
    }),
  );
}

/** Distinct tracks per zone since the task started: a flow counter's count split by zone. */
export class ZoneFlow {
  private readonly perZone = new Map<string, FlowTally>();

  /** Adds this frame's counted tracks; returns the distinct tracks of every zone so far. */
  add(
    nowMs: number,
    zones: readonly Named[],
    tracks: readonly { trackId: string; zones?: readonly string[] }[],
  ): Record<string, number> {
    return Object.fromEntries(
      zones.map((zone) => {
        const tally = this.perZone.get(zone.name) ?? new FlowTally();
        this.perZone.set(zone.name, tally);
        const inside = tracks.filter((t) => t.zones?.includes(zone.name));
        tally.add(
          nowMs,
          inside.map((t) => ({ trackId: t.trackId, classId: '' })),
        );
        return [zone.name, tally.total];
      }),
    );
  }
}

/** Line crossings per zone since the task started (by the crossing object's foot point after it). */
export class ZoneCrossings {
  private readonly perZone = new Map<string, number>();

  add(objects: readonly { zones?: readonly string[] }[]): void {
    for (const zone of objects.flatMap((o) => o.zones ?? [])) {
      this.perZone.set(zone, (this.perZone.get(zone) ?? 0) + 1);
    }
  }

  of(zones: readonly Named[]): Record<string, number> {
    return Object.fromEntries(zones.map((zone) => [zone.name, this.perZone.get(zone.name) ?? 0]));
  }
}
