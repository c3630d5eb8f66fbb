import { intervalMs, report, Throttle, withinBounds } from './report';
import type { Match, ReportedObject, RuleFiring, RuleInput } from './rule-kind';
import type { Counter } from './schema';
import { FlowTally } from './time-series';
import { countPerZone, ZoneFlow } from './zones';

/**
 * The app's counter (rule `counter`): what it counts in a frame and its firing while the count is
 * within its bounds, under the rule's interval. It fires alone on types 1 and 2 (presence), besides
 * loitering and left objects over the confirmed tracks in the region, and over a line's crossings;
 * one Counting per app keeps its flow tallies and timer whichever kind counts with it.
 */

/** What a counter counted in this frame. */
export interface Tally {
  objects: ReportedObject[];
  count: number;
  countOf(classId: string): number;
  zoneCounts?: Record<string, number>;
}

/** The largest set of matches chained by foot points at most `distance` apart (single linkage). */
function largestGroup(matches: readonly Match[], distance: number): Match[] {
  const unvisited = new Set(matches);
  let largest: Match[] = [];
  for (const seed of matches) {
    if (!unvisited.has(seed)) continue;
    unvisited.delete(seed);
    const group = [seed];
    for (let i = 0; i < group.length; i++) {
      const from = (group[i] as Match).foot;
      for (const other of unvisited) {
        if (Math.hypot(other.foot[0] - from[0], other.foot[1] - from[1]) <= distance) {
          unvisited.delete(other);
          group.push(other);
        }
      }
    }
    if (group.length > largest.length) largest = group;
  }
  return largest;
}

function countPerClass(objects: readonly ReportedObject[]) {
  return (classId: string) => objects.filter((o) => o.class_id === classId).length;
}

export class Counting {
  private readonly flow = new FlowTally();
  private readonly zoneFlow = new ZoneFlow();
  private readonly throttle = new Throttle();

  /** The counter's firing over these objects: present now (optionally the largest crowd), or flow. */
  count(input: RuleInput, counter: Counter, candidates: readonly Match[]): RuleFiring[] {
    return this.fire(input, counter, this.tally(input, counter, candidates));
  }

  /** Beside a type-3 region rule (loitering, left objects): the counter over the confirmed tracks present. */
  countConfirmed(input: RuleInput): RuleFiring[] {
    const counter = input.app.rule.counter;
    return counter
      ? this.count(
          input,
          counter,
          input.present.filter((m) => m.object.confirmed),
        )
      : [];
  }

  /** The counter's firing over a tally, with a line's counts when it counts crossings. */
  fire(
    { app, frame }: RuleInput,
    counter: Counter,
    tally: Tally,
    lineCounts?: Pick<RuleFiring, 'counts' | 'counts_by_class'>,
  ): RuleFiring[] {
    const holds =
      withinBounds(tally.count, counter.min_count, counter.max_count) &&
      counter.class_counts.every((cc) =>
        withinBounds(tally.countOf(cc.class_id), cc.min_count, cc.max_count),
      );
    const id = `${app.appId}:counter`;
    if (!holds || !this.throttle.due(id, frame, intervalMs(app))) return [];
    const classIds = [...app.entries.keys()].join(',');
    const zoneCounts = tally.zoneCounts && { zone_counts: tally.zoneCounts };
    return [
      { id, class_id: classIds, objects: tally.objects, count: tally.count, ...lineCounts, ...zoneCounts },
    ];
  }

  /** Counted objects: present now (optionally the largest crowd), or distinct confirmed tracks (flow). */
  private tally({ app, nowMs }: RuleInput, counter: Counter, candidates: readonly Match[]): Tally {
    const zones = app.zones;
    const perZone = (objects: readonly ReportedObject[]) =>
      zones.length > 0 ? { zoneCounts: countPerZone(zones, objects) } : {};
    if (counter.numeric_type === 1 && app.perImage) {
      const objects = candidates.map((m) => report(m));
      return { objects, count: objects.length, countOf: countPerClass(objects), ...perZone(objects) };
    }
    if (counter.numeric_type === 1) {
      const confirmed = candidates.filter((m) => m.object.confirmed);
      this.flow.add(
        nowMs,
        confirmed.map((m) => ({ trackId: m.object.trackId, classId: m.entry.class_id })),
      );
      const tracks = confirmed.map((m) => ({ trackId: m.object.trackId, zones: m.zones }));
      return {
        objects: confirmed.map((m) => report(m)),
        count: this.flow.total,
        countOf: (c) => this.flow.countOf(c),
        ...(zones.length > 0 && { zoneCounts: this.zoneFlow.add(nowMs, zones, tracks) }),
      };
    }
    const counted = counter.distance > 0 ? largestGroup(candidates, counter.distance) : candidates;
    const objects = counted.map((m) => report(m));
    return { objects, count: objects.length, countOf: countPerClass(objects), ...perZone(objects) };
  }
}
