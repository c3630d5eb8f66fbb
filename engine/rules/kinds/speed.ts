import { intervalMs, report, Throttle, withinBounds } from '../report';
import type { RuleFiring, RuleInput, RuleKind } from '../rule-kind';

/**
 * Rule `speed`, any type, besides the app's other rules: per limit, the confirmed objects of its class
 * whose ground speed is within its bounds, under the rule's interval.
 */
export class SpeedRule implements RuleKind {
  private readonly throttle = new Throttle();

  applies({ app }: RuleInput): boolean {
    return (app.rule.speed ?? []).length > 0;
  }

  judge({ app, frame, present }: RuleInput): RuleFiring[] {
    const firings: RuleFiring[] = [];
    for (const limit of app.rule.speed ?? []) {
      const objects = present
        .filter((m) => {
          const speed = m.motion?.velocity?.speed;
          return (
            m.entry.class_id === limit.class_id &&
            m.object.confirmed &&
            speed !== undefined &&
            withinBounds(speed, limit.min_speed, limit.max_speed)
          );
        })
        .map((m) => report(m));
      const id = `${app.appId}:speed:${limit.class_id}`;
      if (objects.length > 0 && this.throttle.due(id, frame, intervalMs(app)))
        firings.push({ id, class_id: limit.class_id, objects });
    }
    return firings;
  }
}
