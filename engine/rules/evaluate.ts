import type { Polygon, Zone } from '../tasks/schema';
import { pointInPolygon, toPoints } from '../vision/geometry';
import type { Frame, Point, TrackedObject } from '../vision/types';
import type { AppCounts, DirectionCounts, LineCounts, ZoneOccupancy } from './counts';
import { AreaDwell, seconds } from './dwell';
import type { GroundMap } from './ground';
import { DEFAULT_INERTIA, TrackInertia } from './inertia';
import { LeftObjects } from './left-object';
import { REMOVED_COLOR, type RemovedArea, RemovedObjects, type WatchedArea } from './removed-object';
import {
  APP_TYPE,
  type ClassEntry,
  type Counter,
  DEFAULT_PERSON_CLASS_ID,
  type LeftObject,
  type Rule,
} from './schema';
import { TrackSpeeds, type Velocity } from './speed';
import { type MotionState, TrackMotion } from './stationary';
import { CrossingTally, type Direction, FlowTally, LineCrossings, LoiteringVisits } from './time-series';
import { countPerZone, masked, occupancy, ZoneCrossings, ZoneFlow, zonesAt } from './zones';

/**
 * Applies one application's rule to the tracked objects of each analysed frame
 * (api-decisions.md, "Rule semantics"): which objects match, which rules fire, what the overlay shows.
 */

export interface AppRuleContext {
  appId: string;
  appType: 1 | 2 | 3;
  rule: Rule;
  /** Source pixels of the current frame size; [] the whole frame, 2 points a counting line (type 3). */
  polygon: Polygon;
  /** Named zones (extension): reported objects name theirs, counters count per zone. */
  zones?: Zone[];
  /** Exclusion masks (extension): an object whose foot point lies in one counts for no rule. */
  masks?: Polygon[];
  /** Images without tracks (image and diff tasks): flow counting counts the distinct objects of each image. */
  perImage?: boolean;
  /** Image pixels to ground metres (calibration or length_reference): objects then carry a speed. */
  ground?: GroundMap;
}

export interface FrameInfo {
  id: number;
  /** When the frame arrived (the event's timestamp): `interval` counts between callbacks by it. */
  timestampMs: number;
  /**
   * The frame's time on the media's clock (video tasks), which stays, loitering, speed and stops are
   * timed by, so they hold whatever rate the source delivers at; timestampMs when absent.
   */
  mediaMs?: number;
  width: number;
  height: number;
}

export interface ReportedObject {
  track_id: string;
  x: number;
  y: number;
  w: number;
  h: number;
  score: number;
  class_id: string;
  name: string;
  direction?: Direction;
  area?: number;
  /** Names of the zones the foot point stands in, when the app has zones. */
  zones?: string[];
  /** Seconds in the app's region (video tasks). */
  dwell?: number;
  /** Seconds in each zone the foot point stands in (video tasks, apps with zones). */
  zone_dwell?: Record<string, number>;
  state?: MotionState;
  /** m/s on the ground, when the app is calibrated and the track was seen long enough. */
  speed?: number;
  /** Direction of travel, degrees from the ground's +x axis towards its +y axis. */
  heading?: number;
  /** Seconds a left object has stood still with nobody near. */
  left?: number;
  /** Seconds a removed object's area has differed from its background. */
  removed?: number;
}

export interface RuleFiring {
  id: string;
  class_id: string;
  objects: ReportedObject[];
  count?: number;
  /** Line crossings since the start: of the firing's class on a class rule, of all classes on the counter. */
  counts?: DirectionCounts;
  /** The counter's crossings per class entry (class_id keyed). */
  counts_by_class?: Record<string, DirectionCounts>;
  /** The counter's count per zone name, when the app has zones. */
  zone_counts?: Record<string, number>;
}

export interface ShownObject extends ReportedObject {
  /** #rrggbb of the class entry. */
  color: string;
}

export interface RuleResult {
  firings: RuleFiring[];
  shown: ShownObject[];
  /** Removed objects' areas that fired and still differ from their background, to be drawn. */
  removed: ShownObject[];
  zoneOccupied: boolean;
}

const mediaTime = (frame: FrameInfo) => frame.mediaMs ?? frame.timestampMs;

/** A removed object's area as reported: its differing box, share and time, under its zone's name. */
function reportRemoved({ name, box, fraction, area, sinceMs }: RemovedArea, nowMs: number): ReportedObject {
  return {
    track_id: '',
    x: Math.round((box.x1 + box.x2) / 2),
    y: Math.round((box.y1 + box.y2) / 2),
    w: Math.round(box.x2 - box.x1),
    h: Math.round(box.y2 - box.y1),
    score: Math.round(fraction * 1000) / 1000,
    class_id: 'removed',
    name: name || 'removed',
    area,
    ...(name && { zones: [name] }),
    removed: seconds(nowMs - sinceMs),
  };
}

/** An object that meets its class entry's criteria in this frame. */
interface Match {
  object: TrackedObject;
  entry: ClassEntry;
  foot: Point;
  /** Foot point inside the region; always true without a region (whole frame or counting line). */
  inRegion: boolean;
  /** Zones of the foot point; undefined when the app has none. */
  zones?: string[];
  /** The track meets the rule's inertia (always true per image): only then may the object fire. */
  steady: boolean;
  /** Video tasks only: images have no tracks to follow. */
  motion?: { dwellMs: number; zoneDwellMs?: Map<string, number>; state: MotionState; velocity?: Velocity };
}

/** What a counter counted in this frame. */
interface Tally {
  objects: ReportedObject[];
  count: number;
  countOf(classId: string): number;
  zoneCounts?: Record<string, number>;
}

const withinBounds = (value: number, min: number, max: number) => value >= min && (max === 0 || value <= max);

function entryMatches(entry: ClassEntry, o: TrackedObject): boolean {
  const longerSide = Math.max(o.x2 - o.x1, o.y2 - o.y1);
  return o.score >= entry.threshold && withinBounds(longerSide, entry.min_pixel, entry.max_pixel);
}

function report({ object, entry, zones, motion }: Match, direction?: Direction): ReportedObject {
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

/**
 * Time-series rules follow every sighting (a visit's start, the side of the line) but count only
 * confirmed tracks that meet the inertia.
 */
const countable = (m: Match) => m.object.confirmed && m.steady;

/** Class entries by class_id, in rule order (class ids are unique, validate.ts checks). */
const entriesOf = (rule: Rule) => new Map((rule.classes ?? []).map((entry) => [entry.class_id, entry]));

/**
 * What an app's rules keep of past frames (fire times, tallies, per-track state): one set, started
 * over whole when the task's app changes.
 */
function newBooks() {
  return {
    lastFiredMs: new Map<string, number>(),
    flow: new FlowTally(),
    visits: new LoiteringVisits(),
    crossings: new LineCrossings(),
    crossed: new CrossingTally(),
    inertia: new TrackInertia(),
    zoneFlow: new ZoneFlow(),
    zoneCrossings: new ZoneCrossings(),
    regionDwell: new AreaDwell(),
    zoneDwell: new AreaDwell(),
    motion: new TrackMotion(),
    speeds: new TrackSpeeds(),
    left: new LeftObjects(),
    removed: new RemovedObjects(),
  };
}

/** Rule state of one application within one task; feed it every analysed frame in order. */
export class AppRuleState {
  private ctx: AppRuleContext;
  private entries: Map<string, ClassEntry>;
  private books = newBooks();
  /** The zones' occupancy after the last frame; null before it and for an app without zones. */
  private occupied: ZoneOccupancy | null = null;

  constructor(ctx: AppRuleContext) {
    this.ctx = ctx;
    this.entries = entriesOf(ctx.rule);
  }

  /** Live update: counts and interval timers survive unless the app itself changes. */
  setContext(ctx: AppRuleContext): void {
    const previous = this.ctx;
    if (previous.appId !== ctx.appId || previous.appType !== ctx.appType) {
      this.books = newBooks();
    } else if (JSON.stringify(previous.polygon) !== JSON.stringify(ctx.polygon)) {
      // A visit is a stay inside one shape. Crossing sides stay valid: scaling keeps the sign of the
      // cross product, and a track's stored side corrects itself on its next sighting after a move.
      this.books.visits = new LoiteringVisits();
      this.books.regionDwell = new AreaDwell();
    }
    this.ctx = ctx;
    this.entries = entriesOf(ctx.rule);
  }

  /** Its line's crossings since the start and its zones' occupancy after the last frame. */
  counts(): AppCounts {
    return { line: this.lineCounts(), zones: this.occupied };
  }

  /** The crossings of the counting line since the start; null when the app counts on no line. */
  lineCounts(): LineCounts | null {
    if (this.ctx.appType !== APP_TYPE.timeSeries || !this.countingLine) return null;
    const classes = Object.fromEntries([...this.entries.keys()].map((c) => [c, this.books.crossed.of(c)]));
    return { ...this.books.crossed.totals, classes };
  }

  /** `picture`: the analysed frame's pixels (any size), for removed objects; absent for a black fill frame. */
  evaluate(frame: FrameInfo, objects: readonly TrackedObject[], picture?: Frame): RuleResult {
    const matches = this.match(objects);
    if (!this.ctx.perImage) this.follow(frame, matches);
    const present = matches.filter((m) => m.inRegion && m.steady);
    const removed = this.removedObjects(frame, objects, picture);
    const firings = [
      ...(this.ctx.appType === APP_TYPE.timeSeries
        ? this.timeSeriesFirings(frame, matches, present, objects)
        : this.detectionFirings(frame, present)),
      ...this.speedFirings(frame, present),
      ...removed.firings,
    ];
    const shown = present.map((m) => ({ ...report(m), color: m.entry.color }));
    this.occupied = this.zones.length > 0 ? occupancy(this.zones, [...this.entries.keys()], shown) : null;
    return { firings, shown, removed: removed.shown, zoneOccupied: shown.length > 0 };
  }

  private get region(): Point[] | null {
    return this.ctx.polygon.length >= 3 ? toPoints(this.ctx.polygon) : null;
  }

  private get countingLine(): readonly [Point, Point] | null {
    return this.ctx.polygon.length === 2 ? (toPoints(this.ctx.polygon) as [Point, Point]) : null;
  }

  /** The app's zones; empty when it has none. */
  private get zones(): Zone[] {
    return this.ctx.zones ?? [];
  }

  private get intervalMs(): number {
    return (this.ctx.rule.interval ?? 0) * 1000;
  }

  private match(objects: readonly TrackedObject[]): Match[] {
    const region = this.region;
    const steady = this.ctx.perImage
      ? null
      : this.books.inertia.update(
          objects.map((o) => o.trackId),
          this.ctx.rule.inertia ?? DEFAULT_INERTIA,
        );
    const zones = this.zones;
    const masks = this.ctx.masks ?? [];
    const matches: Match[] = [];
    for (const object of objects) {
      const entry = this.entries.get(String(object.classIndex));
      if (!entry || !entryMatches(entry, object)) continue;
      const foot: Point = [(object.x1 + object.x2) / 2, object.y2];
      if (masked(foot, masks)) continue;
      matches.push({
        object,
        entry,
        foot,
        ...(zones.length > 0 && { zones: zonesAt(foot, zones) }),
        inRegion: region === null || pointInPolygon(foot, region),
        steady: steady === null || steady.has(object.trackId),
      });
    }
    return matches;
  }

  /** Dwell times and motion state of each match (video tasks). */
  private follow(frame: FrameInfo, matches: Match[]): void {
    const now = mediaTime(frame);
    const region = this.books.regionDwell.update(
      now,
      matches.map((m) => ({ trackId: m.object.trackId, areas: m.inRegion ? [''] : [] })),
    );
    const zones =
      this.zones.length > 0
        ? this.books.zoneDwell.update(
            now,
            matches.map((m) => ({ trackId: m.object.trackId, areas: m.zones ?? [] })),
          )
        : null;
    const states = this.books.motion.update(
      now,
      matches.map(({ object: o, foot }) => ({
        trackId: o.trackId,
        foot,
        size: Math.max(o.x2 - o.x1, o.y2 - o.y1),
      })),
    );
    const ground = this.ctx.ground;
    const velocities =
      ground &&
      this.books.speeds.update(
        now,
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

  /** True, and the rule's timer restarted, when `interval` has passed since the rule last fired. */
  private tryFire(ruleId: string, frame: FrameInfo): boolean {
    const last = this.books.lastFiredMs.get(ruleId);
    // Frame time running backwards (a restarted stream) must not silence the rule until it catches up.
    const due = last === undefined || frame.timestampMs < last || frame.timestampMs - last >= this.intervalMs;
    if (due) this.books.lastFiredMs.set(ruleId, frame.timestampMs);
    return due;
  }

  /** One firing per class entry with objects, in entry order. */
  private classFirings(
    reported: readonly ReportedObject[],
    allowed: (ruleId: string) => boolean,
  ): RuleFiring[] {
    const firings: RuleFiring[] = [];
    for (const classId of this.entries.keys()) {
      const objects = reported.filter((o) => o.class_id === classId);
      const id = `${this.ctx.appId}:${classId}`;
      if (objects.length > 0 && allowed(id)) firings.push({ id, class_id: classId, objects });
    }
    return firings;
  }

  private counterFiring(
    frame: FrameInfo,
    counter: Counter,
    tally: Tally,
    lineCounts?: Pick<RuleFiring, 'counts' | 'counts_by_class'>,
  ): RuleFiring[] {
    const holds =
      withinBounds(tally.count, counter.min_count, counter.max_count) &&
      counter.class_counts.every((cc) =>
        withinBounds(tally.countOf(cc.class_id), cc.min_count, cc.max_count),
      );
    const id = `${this.ctx.appId}:counter`;
    if (!holds || !this.tryFire(id, frame)) return [];
    const classIds = [...this.entries.keys()].join(',');
    const zoneCounts = tally.zoneCounts && { zone_counts: tally.zoneCounts };
    return [
      { id, class_id: classIds, objects: tally.objects, count: tally.count, ...lineCounts, ...zoneCounts },
    ];
  }

  /** Counted objects: present now (optionally the largest crowd), or distinct confirmed tracks (flow). */
  private objectTally(frame: FrameInfo, counter: Counter, candidates: readonly Match[]): Tally {
    const zones = this.zones;
    const perZone = (objects: readonly ReportedObject[]) =>
      zones.length > 0 ? { zoneCounts: countPerZone(zones, objects) } : {};
    if (counter.numeric_type === 1 && this.ctx.perImage) {
      const objects = candidates.map((m) => report(m));
      return { objects, count: objects.length, countOf: countPerClass(objects), ...perZone(objects) };
    }
    if (counter.numeric_type === 1) {
      const confirmed = candidates.filter((m) => m.object.confirmed);
      this.books.flow.add(
        mediaTime(frame),
        confirmed.map((m) => ({ trackId: m.object.trackId, classId: m.entry.class_id })),
      );
      const tracks = confirmed.map((m) => ({ trackId: m.object.trackId, zones: m.zones }));
      return {
        objects: confirmed.map((m) => report(m)),
        count: this.books.flow.total,
        countOf: (c) => this.books.flow.countOf(c),
        ...(zones.length > 0 && { zoneCounts: this.books.zoneFlow.add(mediaTime(frame), zones, tracks) }),
      };
    }
    const counted = counter.distance > 0 ? largestGroup(candidates, counter.distance) : candidates;
    const objects = counted.map((m) => report(m));
    return { objects, count: objects.length, countOf: countPerClass(objects), ...perZone(objects) };
  }

  /**
   * The speed rule: per limit, the confirmed objects of its class whose speed is within its bounds,
   * under the rule's interval; besides the app's other rules.
   */
  private speedFirings(frame: FrameInfo, present: readonly Match[]): RuleFiring[] {
    const firings: RuleFiring[] = [];
    for (const limit of this.ctx.rule.speed ?? []) {
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
      const id = `${this.ctx.appId}:speed:${limit.class_id}`;
      if (objects.length > 0 && this.tryFire(id, frame))
        firings.push({ id, class_id: limit.class_id, objects });
    }
    return firings;
  }

  /** Types 1 and 2: a counter, when present, fires alone; the class entries only say what it counts. */
  private detectionFirings(frame: FrameInfo, present: readonly Match[]): RuleFiring[] {
    const counter = this.ctx.rule.counter;
    // A flow counter counts tracks, not alarms: hiding a still one would count it again once forgotten.
    const once = this.ctx.rule.stationary === 'once' && !this.ctx.perImage && counter?.numeric_type !== 1;
    const candidates = once
      ? present.filter((m) => !this.books.motion.firedInThisStop(m.object.trackId))
      : present;
    const firings = counter
      ? this.counterFiring(frame, counter, this.objectTally(frame, counter, candidates))
      : this.classFirings(
          candidates.map((m) => report(m)),
          (id) => this.tryFire(id, frame),
        );
    if (once) {
      for (const o of firings.flatMap((f) => f.objects))
        this.books.motion.reported(o.track_id, mediaTime(frame));
    }
    return firings;
  }

  /**
   * Type 3: class rules report events (loitering, crossings) each exactly once, so `interval` does not
   * throttle them; a counter fires besides them and obeys `interval`.
   */
  private timeSeriesFirings(
    frame: FrameInfo,
    matches: readonly Match[],
    present: readonly Match[],
    objects: readonly TrackedObject[],
  ): RuleFiring[] {
    const line = this.countingLine;
    if (line) return this.crossingFirings(frame, line, matches);
    const leftObject = this.ctx.rule.left_object;
    const firings = leftObject
      ? this.leftFirings(frame, matches, objects, leftObject)
      : this.loiteringFirings(frame, matches);
    const counter = this.ctx.rule.counter;
    if (!counter) return firings;
    const confirmed = present.filter((m) => m.object.confirmed);
    return [...firings, ...this.counterFiring(frame, counter, this.objectTally(frame, counter, confirmed))];
  }

  private loiteringFirings(frame: FrameInfo, matches: readonly Match[]): RuleFiring[] {
    const loitering = this.books.visits.update(
      mediaTime(frame),
      this.intervalMs,
      matches.map((m) => ({ trackId: m.object.trackId, inside: m.inRegion, confirmed: countable(m) })),
    );
    return this.classFirings(
      matches.filter((m) => loitering.has(m.object.trackId)).map((m) => report(m)),
      () => true,
    );
  }

  /**
   * Left objects: matches in the region, stationary, with no person's foot point near theirs (within
   * `radius` of that person's box heights, or `meters` on the ground when the app has a ground scale).
   * A person of a class entry is near itself, so it is never left.
   */
  private leftFirings(
    frame: FrameInfo,
    matches: readonly Match[],
    objects: readonly TrackedObject[],
    rule: LeftObject,
  ): RuleFiring[] {
    const personClass = rule.person_class_id ?? DEFAULT_PERSON_CLASS_ID;
    const people = objects
      .filter((o) => String(o.classIndex) === personClass)
      .map((o): { foot: Point; height: number } => ({
        foot: [(o.x1 + o.x2) / 2, o.y2],
        height: o.y2 - o.y1,
      }));
    const ground = this.ctx.ground;
    const apart = (a: Point, b: Point) => Math.hypot(a[0] - b[0], a[1] - b[1]);
    const near = (foot: Point) =>
      people.some((p) =>
        ground && rule.meters !== undefined
          ? apart(ground(foot), ground(p.foot)) <= rule.meters
          : apart(foot, p.foot) <= rule.radius * p.height,
      );
    const now = mediaTime(frame);
    const inside = matches.filter((m) => m.inRegion);
    const { leftMs, firing } = this.books.left.update(
      now,
      rule.seconds * 1000,
      inside.map((m) => ({
        trackId: m.object.trackId,
        stillSinceMs: this.books.motion.stillSince(m.object.trackId, now),
        attended: near(m.foot),
        confirmed: countable(m),
      })),
    );
    const left = inside
      .filter((m) => firing.has(m.object.trackId))
      .map((m) => ({ ...report(m), left: seconds(leftMs.get(m.object.trackId) ?? 0) }));
    return this.classFirings(left, () => true);
  }

  /**
   * Removed objects (rule `removed_object`, type 3): each zone, else the region or the frame, watched;
   * the firings of this frame, and the areas that fired and still differ, to be drawn.
   */
  private removedObjects(
    frame: FrameInfo,
    objects: readonly TrackedObject[],
    picture: Frame | undefined,
  ): { firings: RuleFiring[]; shown: ShownObject[] } {
    const rule = this.ctx.rule.removed_object;
    if (!rule || !picture || this.ctx.perImage || this.ctx.appType !== APP_TYPE.timeSeries)
      return { firings: [], shown: [] };
    const personClass = rule.person_class_id ?? DEFAULT_PERSON_CLASS_ID;
    const people = objects.filter((o) => String(o.classIndex) === personClass);
    const areas: WatchedArea[] =
      this.zones.length > 0
        ? this.zones.map((zone) => ({ name: zone.name, polygon: toPoints(zone.polygon) }))
        : [{ name: '', polygon: this.region }];
    const nowMs = mediaTime(frame);
    const removed = this.books.removed.update(nowMs, picture, frame, areas, people, rule);
    const shown = this.books.removed
      .showing()
      .map((area) => ({ ...reportRemoved(area, nowMs), color: REMOVED_COLOR }));
    if (removed.length === 0) return { firings: [], shown };
    const reported = removed.map((area) => reportRemoved(area, nowMs));
    return { firings: [{ id: `${this.ctx.appId}:removed`, class_id: 'removed', objects: reported }], shown };
  }

  private crossingFirings(
    frame: FrameInfo,
    line: readonly [Point, Point],
    matches: readonly Match[],
  ): RuleFiring[] {
    const directions = this.books.crossings.update(
      mediaTime(frame),
      line,
      matches.map((m) => ({ trackId: m.object.trackId, foot: m.foot, confirmed: countable(m) })),
    );
    const crossers: ReportedObject[] = [];
    for (const m of matches) {
      const direction = directions.get(m.object.trackId);
      if (!direction) continue;
      crossers.push(report(m, direction));
      this.books.crossed.add(m.entry.class_id, direction);
    }
    this.books.zoneCrossings.add(crossers);
    const firings = this.classFirings(crossers, () => true).map((firing) => ({
      ...firing,
      counts: this.books.crossed.of(firing.class_id),
    }));
    const counter = this.ctx.rule.counter;
    if (!counter) return firings;
    const { classes, ...counts } = this.lineCounts() as LineCounts;
    const tally = {
      objects: crossers,
      count: counts.in + counts.out,
      countOf: (c: string) => this.books.crossed.countOf(c),
      ...(this.zones.length > 0 && { zoneCounts: this.books.zoneCrossings.of(this.zones) }),
    };
    return [...firings, ...this.counterFiring(frame, counter, tally, { counts, counts_by_class: classes })];
  }
}
