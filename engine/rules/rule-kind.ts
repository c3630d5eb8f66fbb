import type { LineDirection } from '../tasks/schema';
import type { Frame, Point, TrackedObject } from '../vision/types';
import type { DirectionCounts } from './counts';
import type { GroundMap } from './ground';
import type { AppType, ClassEntry, Rule } from './schema';
import type { Velocity } from './speed';
import type { MotionState } from './stationary';
import type { Direction } from './time-series';

/**
 * The one interface of the rule kinds (kinds/: presence, loitering, crossing, left and removed objects,
 * speed) and the data they take and give: an app's analysed frame in, its firings out. Each kind keeps
 * its own memory; what it draws, when anything, it answers apart from what it fires.
 */

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

/** A named zone of the app, its polygon as Points. */
export interface ZoneArea {
  name: string;
  polygon: Point[];
}

/** An app as its rule kinds see it: its rule, its class entries and its areas as Points. */
export interface AppView {
  appId: string;
  appType: AppType;
  rule: Rule;
  /** Class entries by class_id, in rule order (class ids are unique, validate.ts checks). */
  entries: ReadonlyMap<string, ClassEntry>;
  /** The region (3+ points); null for the whole frame and for a counting line. */
  region: Point[] | null;
  /** The counting line (2 points, type 3); null otherwise. */
  line: readonly [Point, Point] | null;
  /** The line's crossings that count: 'in' (side A to B), 'out', or 'both'. */
  lineDirection: LineDirection;
  /** Named zones; empty when the app has none. */
  zones: readonly ZoneArea[];
  /** Exclusion masks: an object whose foot point lies in one counts for no rule. */
  masks: readonly Point[][];
  /** Images without tracks (image and diff tasks). */
  perImage: boolean;
  /** Image pixels to ground metres, when the app has a calibration or length_reference. */
  ground?: GroundMap;
}

/** An object that meets its class entry's criteria in this frame. */
export interface Match {
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

/** What every rule kind judges: one analysed frame of one app. */
export interface RuleInput {
  app: AppView;
  frame: FrameInfo;
  /** The frame's time on the media clock (frame.mediaMs, else its timestamp): what stays are timed by. */
  nowMs: number;
  /** The objects that meet their class entry and no mask, in the region or not. */
  matches: readonly Match[];
  /** The matches in the region that meet the inertia: what stands there now. */
  present: readonly Match[];
  /** Every tracked object of the frame, matched or not (people near left objects, people in front of the background). */
  objects: readonly TrackedObject[];
  /** The analysed frame's pixels (any size); absent for a black fill frame. */
  picture?: Frame;
}

/** One kind of rule: whether the app's rule asks for it, and what it fires in a frame. */
export interface RuleKind {
  applies(input: RuleInput): boolean;
  /** This frame's firings; call it for every frame the kind applies to, in order. */
  judge(input: RuleInput): RuleFiring[];
  /** The app's polygon was edited: a kind whose memory belongs to the old shape starts it over. */
  reshaped?(): void;
}
