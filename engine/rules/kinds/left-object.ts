import { footOf } from '../../vision/geometry';
import type { Point } from '../../vision/types';
import type { Counting } from '../counter';
import { seconds } from '../dwell';
import { LeftObjects } from '../left-object';
import { classFirings, countable, report } from '../report';
import type { RuleFiring, RuleInput, RuleKind } from '../rule-kind';
import { APP_TYPE, DEFAULT_PERSON_CLASS_ID } from '../schema';
import type { TrackMotion } from '../stationary';

/**
 * Type 3 with `left_object`: matches in the region, stationary, with no person's foot point near
 * theirs (within `radius` of that person's box heights, or `meters` on the ground when the app has a
 * ground scale) fire once each, instead of loitering; the counter, when present, fires besides.
 * A person of a class entry is near itself, so it is never left.
 */
export class LeftObjectRule implements RuleKind {
  private readonly left = new LeftObjects();

  constructor(
    private readonly motion: TrackMotion,
    private readonly counting: Counting,
  ) {}

  applies({ app }: RuleInput): boolean {
    return app.appType === APP_TYPE.timeSeries && app.line === null && !!app.rule.left_object;
  }

  judge(input: RuleInput): RuleFiring[] {
    const { app, nowMs, matches, objects } = input;
    const rule = app.rule.left_object;
    if (!rule) return [];
    const personClass = rule.person_class_id ?? DEFAULT_PERSON_CLASS_ID;
    const people = objects
      .filter((o) => String(o.classIndex) === personClass)
      .map((o) => ({ foot: footOf(o), height: o.y2 - o.y1 }));
    const ground = app.ground;
    const apart = (a: Point, b: Point) => Math.hypot(a[0] - b[0], a[1] - b[1]);
    const near = (foot: Point) =>
      people.some((p) =>
        ground && rule.meters !== undefined
          ? apart(ground(foot), ground(p.foot)) <= rule.meters
          : apart(foot, p.foot) <= rule.radius * p.height,
      );
    const inside = matches.filter((m) => m.inRegion);
    const { leftMs, firing } = this.left.update(
      nowMs,
      rule.seconds * 1000,
      inside.map((m) => ({
        trackId: m.object.trackId,
        stillSinceMs: this.motion.stillSince(m.object.trackId, nowMs),
        attended: near(m.foot),
        confirmed: countable(m),
      })),
    );
    const left = inside
      .filter((m) => firing.has(m.object.trackId))
      .map((m) => ({ ...report(m), left: seconds(leftMs.get(m.object.trackId) ?? 0) }));
    return [...classFirings(app, left, () => true), ...this.counting.countConfirmed(input)];
  }
}
