import type { Counting } from '../counter';
import { classFirings, countable, intervalMs, report } from '../report';
import type { RuleFiring, RuleInput, RuleKind } from '../rule-kind';
import { APP_TYPE } from '../schema';
import { LoiteringVisits } from '../time-series';

/**
 * Type 3 with a region or the whole frame: a confirmed track that stays `interval` seconds fires once
 * per visit (so `interval` does not throttle it); the counter, when present, fires besides.
 */
export class LoiteringRule implements RuleKind {
  private visits = new LoiteringVisits();

  constructor(private readonly counting: Counting) {}

  applies({ app }: RuleInput): boolean {
    return app.appType === APP_TYPE.timeSeries && app.line === null && !app.rule.left_object;
  }

  judge(input: RuleInput): RuleFiring[] {
    const { app, nowMs, matches } = input;
    const loitering = this.visits.update(
      nowMs,
      intervalMs(app),
      matches.map((m) => ({ trackId: m.object.trackId, inside: m.inRegion, confirmed: countable(m) })),
    );
    const firings = classFirings(
      app,
      matches.filter((m) => loitering.has(m.object.trackId)).map((m) => report(m)),
      () => true,
    );
    return [...firings, ...this.counting.countConfirmed(input)];
  }

  /** A visit is a stay inside one shape. */
  reshaped(): void {
    this.visits = new LoiteringVisits();
  }
}
