import { segmentsIntersect } from '../vision/geometry';
import type { Point } from '../vision/types';
import type { DirectionCounts } from './counts';

/**
 * Per-track memory of the rules: what must survive from one analysed frame to the next
 * (flow counting, loitering visits, line crossings). Times are frame times in milliseconds.
 */

/**
 * Per-track state is dropped after this much frame time without a sighting, so memory stays bounded
 * over days. It is longer than a tracker keeps a lost track, so a forgotten id does not come back.
 */
export const FORGET_TRACK_AFTER_MS = 60_000;

/** A loitering visit ends when its track has not been seen for longer than this. */
export const VISIT_GAP_MS = 2_000;

export type Direction = 'in' | 'out';

function forgetUnseen(lastSeen: Map<string, { lastSeenMs: number }>, nowMs: number, afterMs: number): void {
  for (const [trackId, state] of lastSeen) {
    if (nowMs - state.lastSeenMs > afterMs) lastSeen.delete(trackId);
  }
}

/** Distinct tracks per class since the task started (flow counting). */
export class FlowTally {
  private readonly recent = new Map<string, { lastSeenMs: number }>();
  private readonly perClass = new Map<string, number>();
  private sum = 0;

  /** Counts each track the first time it is seen; a track seen again is not counted twice. */
  add(nowMs: number, tracks: readonly { trackId: string; classId: string }[]): void {
    forgetUnseen(this.recent, nowMs, FORGET_TRACK_AFTER_MS);
    for (const { trackId, classId } of tracks) {
      if (!this.recent.has(trackId)) {
        this.perClass.set(classId, this.countOf(classId) + 1);
        this.sum++;
      }
      this.recent.set(trackId, { lastSeenMs: nowMs });
    }
  }

  get total(): number {
    return this.sum;
  }

  countOf(classId: string): number {
    return this.perClass.get(classId) ?? 0;
  }
}

/** Line crossings per class and direction since the task started. */
export class CrossingTally {
  private readonly perClass = new Map<string, DirectionCounts>();

  add(classId: string, direction: Direction): void {
    const counts = this.perClass.get(classId) ?? { in: 0, out: 0 };
    counts[direction]++;
    this.perClass.set(classId, counts);
  }

  countOf(classId: string): number {
    const counts = this.perClass.get(classId);
    return counts ? counts.in + counts.out : 0;
  }

  /** A copy of one class's counts, zero before its first crossing. */
  of(classId: string): DirectionCounts {
    return { in: 0, out: 0, ...this.perClass.get(classId) };
  }

  get totals(): DirectionCounts {
    const totals = { in: 0, out: 0 };
    for (const counts of this.perClass.values()) {
      totals.in += counts.in;
      totals.out += counts.out;
    }
    return totals;
  }
}

export interface RegionSighting {
  trackId: string;
  inside: boolean;
  confirmed: boolean;
}

interface Visit {
  startMs: number;
  lastSeenMs: number;
  fired: boolean;
}

/** How long each track has stayed inside a region; a track loiters once per visit. */
export class LoiteringVisits {
  private readonly visits = new Map<string, Visit>();

  /**
   * Returns the tracks whose visit reaches dwellMs in this frame. Visits start at the first sighting,
   * confirmed or not, so dwell time is not shortened by the tracker's confirmation delay; only
   * confirmed tracks fire.
   */
  update(nowMs: number, dwellMs: number, sightings: readonly RegionSighting[]): Set<string> {
    forgetUnseen(this.visits, nowMs, VISIT_GAP_MS);
    const loitering = new Set<string>();
    for (const { trackId, inside, confirmed } of sightings) {
      if (!inside) {
        this.visits.delete(trackId);
        continue;
      }
      const visit = this.visits.get(trackId) ?? { startMs: nowMs, lastSeenMs: nowMs, fired: false };
      visit.lastSeenMs = nowMs;
      this.visits.set(trackId, visit);
      if (confirmed && !visit.fired && nowMs - visit.startMs >= dwellMs) {
        visit.fired = true;
        loitering.add(trackId);
      }
    }
    return loitering;
  }
}

export interface LineSighting {
  trackId: string;
  foot: Point;
  confirmed: boolean;
}

interface LineTrack {
  foot: Point;
  /** Last side the track was strictly on (-1 or 1); 0 while it has only been seen on the line. */
  side: number;
  lastSeenMs: number;
}

/**
 * Sign of (B-A) x (P-A) in image coordinates (y down): positive on the right of A->B as seen on
 * screen, negative on its left, 0 on the line.
 */
function sideOf([a, b]: readonly [Point, Point], p: Point): number {
  return Math.sign((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]));
}

/** Crossings of a counting line A->B by tracked foot points. */
export class LineCrossings {
  private readonly tracks = new Map<string, LineTrack>();

  /**
   * Moves each sighted track and returns the direction of the confirmed ones whose movement since their
   * previous sighting crossed segment AB: 'in' from the left of A->B to its right (the cross product
   * (B-A) x (P-A) goes from negative to positive), 'out' the other way. A foot point landing exactly on
   * the line does not cross; the crossing is reported once, when the track reaches the other side,
   * and not at all when it returns to the side it came from.
   */
  update(
    nowMs: number,
    line: readonly [Point, Point],
    sightings: readonly LineSighting[],
  ): Map<string, Direction> {
    forgetUnseen(this.tracks, nowMs, FORGET_TRACK_AFTER_MS);
    const crossed = new Map<string, Direction>();
    for (const { trackId, foot, confirmed } of sightings) {
      const side = sideOf(line, foot);
      const previous = this.tracks.get(trackId);
      const switchedSide =
        previous !== undefined && previous.side !== 0 && side !== 0 && side !== previous.side;
      if (switchedSide && confirmed && segmentsIntersect(previous.foot, foot, line[0], line[1])) {
        crossed.set(trackId, side > 0 ? 'in' : 'out');
      }
      this.tracks.set(trackId, { foot, side: side === 0 ? (previous?.side ?? 0) : side, lastSeenMs: nowMs });
    }
    return crossed;
  }
}
