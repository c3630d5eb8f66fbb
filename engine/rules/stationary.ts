import type { Point } from '../vision/types';
import { FORGET_TRACK_AFTER_MS } from './time-series';

/** An object is stationary once its foot point has stayed this long near where it stopped. */
export const STILL_AFTER_MS = 3_000;
/**
 * "Near": within this fraction of the box's longer side, so the bound scales with the object's size
 * on screen and detection jitter of a few pixels does not count as movement.
 */
export const STILL_FRACTION = 0.1;

export type MotionState = 'stationary' | 'moving';

interface Stop {
  /** Foot point where the current stop began. */
  anchor: Point;
  sinceMs: number;
  lastSeenMs: number;
  /** Frame time the track was last part of a firing. */
  reportedMs?: number;
}

export interface MotionSighting {
  trackId: string;
  foot: Point;
  /** Longer side of the box in pixels. */
  size: number;
}

/**
 * Whether each track stands still, kept as one stop per track (where and since when), so memory does
 * not grow with the frame rate: a foot point that leaves the stop's neighbourhood starts a new stop.
 */
export class TrackMotion {
  private readonly stops = new Map<string, Stop>();

  /** Records this frame's foot points; returns each sighted track's state. */
  update(nowMs: number, sightings: readonly MotionSighting[]): Map<string, MotionState> {
    for (const [trackId, stop] of this.stops) {
      if (nowMs - stop.lastSeenMs > FORGET_TRACK_AFTER_MS) this.stops.delete(trackId);
    }
    const states = new Map<string, MotionState>();
    for (const { trackId, foot, size } of sightings) {
      let stop = this.stops.get(trackId);
      const moved =
        stop && Math.hypot(foot[0] - stop.anchor[0], foot[1] - stop.anchor[1]) > STILL_FRACTION * size;
      if (!stop || moved) {
        stop = { anchor: foot, sinceMs: nowMs, lastSeenMs: nowMs, reportedMs: stop?.reportedMs };
        this.stops.set(trackId, stop);
      }
      stop.lastSeenMs = nowMs;
      states.set(trackId, nowMs - stop.sinceMs >= STILL_AFTER_MS ? 'stationary' : 'moving');
    }
    return states;
  }

  /** When the track's current stop began, if it is stationary now; undefined while it moves. */
  stillSince(trackId: string, nowMs: number): number | undefined {
    const stop = this.stops.get(trackId);
    return stop && nowMs - stop.sinceMs >= STILL_AFTER_MS ? stop.sinceMs : undefined;
  }

  /** Notes that the track was part of a firing at this frame time. */
  reported(trackId: string, nowMs: number): void {
    const stop = this.stops.get(trackId);
    if (stop) stop.reportedMs = nowMs;
  }

  /**
   * True when the track fired during its current stop, so it has not moved since: `stationary: "once"`
   * skips it. Not waiting for the stationary state keeps a car that parks from firing while it settles.
   */
  firedInThisStop(trackId: string): boolean {
    const stop = this.stops.get(trackId);
    return stop?.reportedMs !== undefined && stop.reportedMs >= stop.sinceMs;
  }
}
