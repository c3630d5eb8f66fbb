import type { Point } from '../vision/types';
import { FORGET_TRACK_AFTER_MS } from './time-series';

/**
 * Speed is the least-squares slope of the foot point's ground position over the last 2 s: every
 * sighting of the window weighs in, so a box edge that moves in steps (a detector's grid) or a frame
 * that arrives a little late does not set the speed alone, and a change of pace shows within two seconds.
 */
export const SPEED_WINDOW_MS = 2_000;
/** A track seen for less than this has no speed yet. */
const LEAST_SPAN_MS = 500;

export interface Velocity {
  /** Metres per second. */
  speed: number;
  /** Direction of travel, degrees 0..360 from the ground's +x axis towards its +y axis. */
  heading: number;
}

interface Track {
  /** Ground positions, oldest first, none older than the window before the newest. */
  path: Array<{ atMs: number; at: Point }>;
  lastSeenMs: number;
}

/** Each track's speed and heading on the ground. */
export class TrackSpeeds {
  private readonly tracks = new Map<string, Track>();

  update(nowMs: number, sightings: readonly { trackId: string; ground: Point }[]): Map<string, Velocity> {
    for (const [trackId, track] of this.tracks) {
      if (nowMs - track.lastSeenMs > FORGET_TRACK_AFTER_MS) this.tracks.delete(trackId);
    }
    const velocities = new Map<string, Velocity>();
    for (const { trackId, ground } of sightings) {
      const track = this.tracks.get(trackId) ?? { path: [], lastSeenMs: nowMs };
      this.tracks.set(trackId, track);
      track.lastSeenMs = nowMs;
      // Frame time that runs backwards (a restarted stream) starts the path again.
      if ((track.path.at(-1)?.atMs ?? -Infinity) >= nowMs) track.path = [];
      track.path.push({ atMs: nowMs, at: ground });
      while ((track.path[0]?.atMs ?? nowMs) < nowMs - SPEED_WINDOW_MS) track.path.shift();
      const span = nowMs - (track.path[0]?.atMs ?? nowMs);
      if (span < LEAST_SPAN_MS) continue;
      const [vx, vy] = slopes(track.path);
      const heading = ((Math.atan2(vy, vx) * 180) / Math.PI + 360) % 360;
      velocities.set(trackId, { speed: Math.hypot(vx, vy), heading });
    }
    return velocities;
  }
}

/** Metres per second along ground x and y: the least-squares slopes of position against time. */
function slopes(path: ReadonlyArray<{ atMs: number; at: Point }>): [number, number] {
  const n = path.length;
  const mean = (f: (p: { atMs: number; at: Point }) => number) => path.reduce((sum, p) => sum + f(p), 0) / n;
  const [t0, x0, y0] = [mean((p) => p.atMs / 1000), mean((p) => p.at[0]), mean((p) => p.at[1])];
  let [tt, tx, ty] = [0, 0, 0];
  for (const { atMs, at } of path) {
    const dt = atMs / 1000 - t0;
    tt += dt * dt;
    tx += dt * (at[0] - x0);
    ty += dt * (at[1] - y0);
  }
  return [tx / tt, ty / tt];
}
