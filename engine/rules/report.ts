import { seconds } from './dwell';
import type { AppView, FrameInfo, Match, ReportedObject, RuleFiring } from './rule-kind';
import type { Direction } from './time-series';

/** Firings' parts the rule kinds share: how an object is reported, one firing per class, the interval. */

export const withinBounds = (value: number, min: number, max: number) =>
  value >= min && (max === 0 || value <= max);

/**
 * Time-series rules follow every sighting (a visit's start, the side of the line) but count only
 * confirmed tracks that meet the inertia.
 */
export const countable = (m: Match) => m.object.confirmed && m.steady;

export function report({ object, entry, zones, motion }: Match, direction?: Direction): ReportedObject {
  return {
    track_id: object.trackId,
    x: Math.round((object.x1 + object.x2) / 2),
    y: Math.round((object.y1 + object.y2) / 2),
    w: Math.round(object.x2 - object.x1),
    h: Math.round(object.y2 - object.y1),
    score: Math.round(object.score * 1000) / 1000,
    class_id: entry.class_id,
    name: entry.name,
    ...(direction && { direction }),
    ...(object.area !== undefined && { area: Math.round(object.area) }),
    ...(zones && { zones }),
    ...(motion && { dwell: seconds(motion.dwellMs) }),
    ...(motion?.zoneDwellMs && {
      zone_dwell: Object.fromEntries([...motion.zoneDwellMs].map(([zone, ms]) => [zone, seconds(ms)])),
    }),
    ...(motion && { state: motion.state }),
    ...(motion?.velocity && {
      speed: Math.round(motion.velocity.speed * 100) / 100,
      heading: Math.round(motion.velocity.heading) % 360,
    }),
  };
}

/** One firing per class entry with objects, in entry order. */
export function classFirings(
  app: AppView,
  reported: readonly ReportedObject[],
  allowed: (ruleId: string) => boolean,
): RuleFiring[] {
  const firings: RuleFiring[] = [];
  for (const classId of app.entries.keys()) {
    const objects = reported.filter((o) => o.class_id === classId);
    const id = `${app.appId}:${classId}`;
    if (objects.length > 0 && allowed(id)) firings.push({ id, class_id: classId, objects });
  }
  return firings;
}

/** The rule's `interval` between two firings of one rule id. */
export class Throttle {
  private readonly lastFiredMs = new Map<string, number>();

  /** True, and the rule's timer restarted, when `interval` has passed since the rule last fired. */
  due(ruleId: string, frame: FrameInfo, intervalMs: number): boolean {
    const last = this.lastFiredMs.get(ruleId);
    // Frame time running backwards (a restarted stream) must not silence the rule until it catches up.
    const due = last === undefined || frame.timestampMs < last || frame.timestampMs - last >= intervalMs;
    if (due) this.lastFiredMs.set(ruleId, frame.timestampMs);
    return due;
  }
}

/** The rule's interval in ms: between callbacks, and a type-3 app's loitering time. */
export const intervalMs = (app: AppView) => (app.rule.interval ?? 0) * 1000;
