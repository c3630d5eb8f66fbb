import { AreaDwell } from './dwell';
import type { AppView, Match } from './rule-kind';
import { TrackSpeeds } from './speed';
import { TrackMotion } from './stationary';

/**
 * What the rules follow of each matched track over a video (images have no tracks): how long it has
 * stood in the region and in each zone, whether it stands still, and its speed on the ground.
 */
export class TrackFollow {
  /** Stops of each track: left objects and `stationary: "once"` read them too. */
  readonly motion = new TrackMotion();
  private regionDwell = new AreaDwell();
  private readonly zoneDwell = new AreaDwell();
  private readonly speeds = new TrackSpeeds();

  /** Sets each match's motion for this frame. */
  update(app: AppView, nowMs: number, matches: Match[]): void {
    const region = this.regionDwell.update(
      nowMs,
      matches.map((m) => ({ trackId: m.object.trackId, areas: m.inRegion ? [''] : [] })),
    );
    const zones =
      app.zones.length > 0
        ? this.zoneDwell.update(
            nowMs,
            matches.map((m) => ({ trackId: m.object.trackId, areas: m.zones ?? [] })),
          )
        : null;
    const states = this.motion.update(
      nowMs,
      matches.map(({ object: o, foot }) => ({
        trackId: o.trackId,
        foot,
        size: Math.max(o.x2 - o.x1, o.y2 - o.y1),
      })),
    );
    const ground = app.ground;
    const velocities =
      ground &&
      this.speeds.update(
        nowMs,
        matches.map((m) => ({ trackId: m.object.trackId, ground: ground(m.foot) })),
      );
    for (const m of matches) {
      const id = m.object.trackId;
      const velocity = velocities?.get(id);
      m.motion = {
        dwellMs: region.get(id)?.get('') ?? 0,
        ...(zones && { zoneDwellMs: zones.get(id) }),
        state: states.get(id) ?? 'moving',
        ...(velocity && { velocity }),
      };
    }
  }

  /** A stay in the region is a stay inside one shape: the app's polygon was edited. */
  reshaped(): void {
    this.regionDwell = new AreaDwell();
  }
}
