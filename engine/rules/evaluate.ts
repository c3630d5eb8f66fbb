import type { LineDirection, Polygon, Zone } from '../tasks/schema';
import { toPoints } from '../vision/geometry';
import type { Frame, TrackedObject } from '../vision/types';
import { Counting } from './counter';
import type { AppCounts, LineCounts, ZoneOccupancy } from './counts';
import { TrackFollow } from './follow';
import type { GroundMap } from './ground';
import { CrossingRule } from './kinds/crossing';
import { LeftObjectRule } from './kinds/left-object';
import { LoiteringRule } from './kinds/loitering';
import { PresenceRule } from './kinds/presence';
import { RemovedObjectRule } from './kinds/removed-object';
import { SpeedRule } from './kinds/speed';
import { Matching } from './matching';
import { report } from './report';
import type { AppView, FrameInfo, RuleFiring, RuleInput, RuleKind, ShownObject } from './rule-kind';
import type { Rule } from './schema';
import { occupancy } from './zones';

/**
 * Applies one application's rule to the tracked objects of each analysed frame
 * (api-decisions.md, "Rule semantics"): which objects match, which rule kinds (rule-kind.ts) fire,
 * what the overlay shows.
 */

export interface AppRuleContext {
  appId: string;
  appType: 1 | 2 | 3;
  rule: Rule;
  /** Source pixels of the current frame size; [] the whole frame, 2 points a counting line (type 3). */
  polygon: Polygon;
  /** The crossings of a counting line that count (extension); default both. */
  line_direction?: LineDirection;
  /** Named zones (extension): reported objects name theirs, counters count per zone. */
  zones?: Zone[];
  /** Exclusion masks (extension): an object whose foot point lies in one counts for no rule. */
  masks?: Polygon[];
  /** Images without tracks (image and diff tasks): flow counting counts the distinct objects of each image. */
  perImage?: boolean;
  /** Image pixels to ground metres (calibration or length_reference): objects then carry a speed. */
  ground?: GroundMap;
}

export interface RuleResult {
  firings: RuleFiring[];
  shown: ShownObject[];
  /** Removed objects' areas that fired and still differ from their background, to be drawn. */
  removed: ShownObject[];
  zoneOccupied: boolean;
}

/** The app as its rule kinds see it: class entries by id, areas as Points. */
function viewOf(ctx: AppRuleContext): AppView {
  const points = toPoints(ctx.polygon);
  const [a, b] = points;
  return {
    appId: ctx.appId,
    appType: ctx.appType,
    rule: ctx.rule,
    entries: new Map((ctx.rule.classes ?? []).map((entry) => [entry.class_id, entry])),
    region: points.length >= 3 ? points : null,
    line: points.length === 2 && a && b ? [a, b] : null,
    lineDirection: ctx.line_direction ?? 'both',
    zones: (ctx.zones ?? []).map((zone) => ({ name: zone.name, polygon: toPoints(zone.polygon) })),
    masks: (ctx.masks ?? []).map(toPoints),
    perImage: ctx.perImage ?? false,
    ...(ctx.ground && { ground: ctx.ground }),
  };
}

/**
 * What an app's rules keep of past frames (inertia, motion, tallies, each kind's memory): one set,
 * started over whole when the task's app changes. The kinds in the order their firings are listed.
 */
function newBooks() {
  const matching = new Matching();
  const follow = new TrackFollow();
  const counting = new Counting();
  const crossing = new CrossingRule(counting);
  const removed = new RemovedObjectRule();
  const kinds: RuleKind[] = [
    new PresenceRule(follow.motion, counting),
    crossing,
    new LeftObjectRule(follow.motion, counting),
    new LoiteringRule(counting),
    new SpeedRule(),
    removed,
  ];
  return { matching, follow, crossing, removed, kinds };
}

/** Rule state of one application within one task; feed it every analysed frame in order. */
export class AppRuleState {
  private ctx: AppRuleContext;
  private app: AppView;
  private books = newBooks();
  /** The zones' occupancy after the last frame; null before it and for an app without zones. */
  private occupied: ZoneOccupancy | null = null;

  constructor(ctx: AppRuleContext) {
    this.ctx = ctx;
    this.app = viewOf(ctx);
  }

  /** Live update: counts and interval timers survive unless the app itself changes. */
  setContext(ctx: AppRuleContext): void {
    const previous = this.ctx;
    if (previous.appId !== ctx.appId || previous.appType !== ctx.appType) {
      this.books = newBooks();
    } else if (JSON.stringify(previous.polygon) !== JSON.stringify(ctx.polygon)) {
      this.books.follow.reshaped();
      for (const kind of this.books.kinds) kind.reshaped?.();
    }
    this.ctx = ctx;
    this.app = viewOf(ctx);
  }

  /** Its line's crossings since the start and its zones' occupancy after the last frame. */
  counts(): AppCounts {
    return { line: this.lineCounts(), zones: this.occupied };
  }

  /** The crossings of the counting line since the start; null when the app counts on no line. */
  lineCounts(): LineCounts | null {
    return this.books.crossing.lineCounts(this.app);
  }

  /** `picture`: the analysed frame's pixels (any size), for removed objects; absent for a black fill frame. */
  evaluate(frame: FrameInfo, objects: readonly TrackedObject[], picture?: Frame): RuleResult {
    const app = this.app;
    const nowMs = frame.mediaMs ?? frame.timestampMs;
    const matches = this.books.matching.match(app, objects);
    if (!app.perImage) this.books.follow.update(app, nowMs, matches);
    const present = matches.filter((m) => m.inRegion && m.steady);
    const input: RuleInput = { app, frame, nowMs, matches, present, objects, ...(picture && { picture }) };
    const firings = this.books.kinds
      .filter((kind) => kind.applies(input))
      .flatMap((kind) => kind.judge(input));
    const shown = present.map((m) => ({ ...report(m), color: m.entry.color }));
    this.occupied = app.zones.length > 0 ? occupancy(app.zones, [...app.entries.keys()], shown) : null;
    return { firings, shown, removed: this.books.removed.shown(input), zoneOccupied: shown.length > 0 };
  }
}
