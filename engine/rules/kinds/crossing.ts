import type { Counting } from '../counter';
import type { LineCounts } from '../counts';
import { classFirings, countable, report } from '../report';
import type { AppView, ReportedObject, RuleFiring, RuleInput, RuleKind } from '../rule-kind';
import { APP_TYPE } from '../schema';
import { CrossingTally, LineCrossings } from '../time-series';
import { ZoneCrossings } from '../zones';

/**
 * Type 3 with a counting line: each confirmed track that crosses it (in the line's direction, when it
 * has one) fires once, with the line's
 * crossings of its class since the start; the counter, when present, counts crossings and fires besides
 * under the rule's interval. Crossing sides survive a rescaled line: scaling keeps the sign of the cross
 * product, and a track's stored side corrects itself on its next sighting after a move.
 */
export class CrossingRule implements RuleKind {
  private readonly crossings = new LineCrossings();
  private readonly crossed = new CrossingTally();
  private readonly zoneCrossings = new ZoneCrossings();

  constructor(private readonly counting: Counting) {}

  applies({ app }: RuleInput): boolean {
    return app.appType === APP_TYPE.timeSeries && app.line !== null;
  }

  judge(input: RuleInput): RuleFiring[] {
    const { app, nowMs, matches } = input;
    if (!app.line) return [];
    const directions = this.crossings.update(
      nowMs,
      app.line,
      matches.map((m) => ({ trackId: m.object.trackId, foot: m.foot, confirmed: countable(m) })),
    );
    const crossers: ReportedObject[] = [];
    for (const m of matches) {
      const direction = directions.get(m.object.trackId);
      if (!direction || (app.lineDirection !== 'both' && direction !== app.lineDirection)) continue;
      crossers.push(report(m, direction));
      this.crossed.add(m.entry.class_id, direction);
    }
    this.zoneCrossings.add(crossers);
    const firings = classFirings(app, crossers, () => true).map((firing) => ({
      ...firing,
      counts: this.crossed.of(firing.class_id),
    }));
    const counter = app.rule.counter;
    if (!counter) return firings;
    const { classes, ...counts } = this.totals(app);
    const tally = {
      objects: crossers,
      count: counts.in + counts.out,
      countOf: (c: string) => this.crossed.countOf(c),
      ...(app.zones.length > 0 && { zoneCounts: this.zoneCrossings.of(app.zones) }),
    };
    return [...firings, ...this.counting.fire(input, counter, tally, { counts, counts_by_class: classes })];
  }

  /** The crossings of the counting line since the start; null when the app counts on no line. */
  lineCounts(app: AppView): LineCounts | null {
    return app.appType === APP_TYPE.timeSeries && app.line ? this.totals(app) : null;
  }

  private totals(app: AppView): LineCounts {
    const classes = Object.fromEntries([...app.entries.keys()].map((c) => [c, this.crossed.of(c)]));
    return { ...this.crossed.totals, classes };
  }
}
