import type { Counting } from '../counter';
import { classFirings, intervalMs, report, Throttle } from '../report';
import type { RuleFiring, RuleInput, RuleKind } from '../rule-kind';
import { APP_TYPE } from '../schema';
import type { TrackMotion } from '../stationary';

/**
 * Types 1 and 2: the objects present in the region fire one rule per class entry, under the rule's
 * interval; a counter, when present, fires alone and the class entries only say what it counts.
 * `stationary: "once"` lets a still object fire once per stop.
 */
export class PresenceRule implements RuleKind {
  private readonly throttle = new Throttle();

  constructor(
    private readonly motion: TrackMotion,
    private readonly counting: Counting,
  ) {}

  applies({ app }: RuleInput): boolean {
    return app.appType !== APP_TYPE.timeSeries;
  }

  judge(input: RuleInput): RuleFiring[] {
    const { app, frame, nowMs, present } = input;
    const counter = app.rule.counter;
    // A flow counter counts tracks, not alarms: hiding a still one would count it again once forgotten.
    const once = app.rule.stationary === 'once' && !app.perImage && counter?.numeric_type !== 1;
    const candidates = once ? present.filter((m) => !this.motion.firedInThisStop(m.object.trackId)) : present;
    const firings = counter
      ? this.counting.count(input, counter, candidates)
      : classFirings(
          app,
          candidates.map((m) => report(m)),
          (id) => this.throttle.due(id, frame, intervalMs(app)),
        );
    if (once) {
      for (const o of firings.flatMap((f) => f.objects)) this.motion.reported(o.track_id, nowMs);
    }
    return firings;
  }
}
