import type { GateHealth } from '../contract/health';
import type { InputSize } from '../inference/decode';
import { MotionDetector } from '../inference/motion';
import type { Box, Frame } from '../vision/types';
import { MAX_REGION_TILES, MAX_REGIONS, mergeRegions, padRegion, planTiles } from './region-plan';

/**
 * Whole frames are detected at least this often with the gate on, so what stands still (a parked
 * car, a left bag, a person who stopped) is still seen and stationary rules keep their objects.
 */
export const FULL_REFRESH_MS = 2_000;
/**
 * The refresh of a task that rests with no track at all: each one that finds the scene still empty
 * doubles the next interval up to this. Objects come into an empty scene by moving, which the
 * motion stage sees on the frame that shows it; the refresh is there for what it misses, and at 2 s
 * it was most of an empty camera's detector. Any motion or track brings FULL_REFRESH_MS back.
 */
export const QUIET_REFRESH_MS = 8_000;
/**
 * While tracks move, the whole frame is detected anyway and the motion stage only learns the
 * background, on one frame this often: when the scene quiets it judges at once, where learning
 * afresh took 10 more frames detected whole after every passer-by.
 */
export const AWAKE_LEARN_MS = 1_000;
/**
 * Nothing moved for this long, in the motion stage or as a track (without crops a stationary track
 * does not count): the task rests, and frames without motion are skipped whole, or only carry the
 * still tracks. Short: a resting task still detects the first frame that shows motion, and the
 * whole frame every FULL_REFRESH_MS.
 */
export const REST_AFTER_MS = 3_000;
/** A track whose box stayed put this long is stationary: re-checked at the full refresh, not on every frame. */
export const STATIONARY_AFTER_MS = 5_000;
/** "Stayed put": its centre moved no more than this share of its box's size from where it settled. */
export const STATIONARY_SHIFT_SHARE = 0.2;
/** The window of the health's rates and mean area. */
const WINDOW_MS = 5_000;

/**
 * Why a frame is detected whole: the gate is off, its motion model warms up, the refresh is due,
 * regions would cost more, or the frame is not skipped and the task does not detect on crops
 * (gate_regions): something moves or a track lives.
 */
export type FullReason = 'off' | 'warmup' | 'refresh' | 'busy' | 'motion';

/**
 * What the detector does with a frame: nothing at all (skip: no detector, tracker or rules), whole
 * (full), or only on regions (possibly none: the tracker and rules still run, on what is carried,
 * as on a resting frame with still tracks).
 */
export type GateDecision =
  | { kind: 'skip' }
  | { kind: 'full'; reason: FullReason }
  | { kind: 'regions'; regions: Box[] };

/** Whether the decision runs a model: a skip and a frame only carrying still tracks do not. */
export function needsModel(decision: GateDecision): boolean {
  return decision.kind === 'full' || (decision.kind === 'regions' && decision.regions.length > 0);
}

/** A track the tracker holds, in the analysed frame's pixels. */
export interface LiveTrack {
  trackId: string;
  box: Box;
  /** Coasting: not seen on the last frame looked at (the person left or is hidden); it keeps no task awake. */
  lost?: boolean;
}

interface Anchor {
  cx: number;
  cy: number;
  since: number;
}

interface Looked {
  at: number;
  /** The frame reached the detector or the tracker. */
  reached: boolean;
  runs: number;
  area: number;
}

/**
 * The motion stage of one video task: a weight-free motion detector on every frame it is shown, then
 * a decision of what the object detector sees (after Frigate's motion regions and DeepStream's
 * inference intervals). Times are passed in, so tests can drive them: decide() takes the frame's
 * time on the task's rule clock (the media's, rule-clock.ts), record() and health() real time.
 */
export class MotionGate {
  private readonly motion = new MotionDetector();
  private lastFullAt = Number.NEGATIVE_INFINITY;
  private refreshMs = FULL_REFRESH_MS;
  private lastLearnedAt = Number.NEGATIVE_INFINITY;
  private lastActiveAt: number | null = null;
  /** Whether the last frame was detected whole for its moving tracks alone (without crops). */
  private awake = false;
  private readonly anchors = new Map<string, Anchor>();
  private readonly looked: Looked[] = [];
  private rests = false;
  readonly counts = { skipped: 0, regions: 0, full: 0 };

  /** Nothing moved for REST_AFTER_MS, and no track but still ones was seen, as of the last decision. */
  get resting(): boolean {
    return this.rests;
  }

  /** The refresh last decided was not run (its frame was dropped): the next frame takes it. */
  refreshMissed(): void {
    this.lastFullAt = Number.NEGATIVE_INFINITY;
  }

  /** The gate was turned back on: its motion model learns the background afresh (full frames meanwhile). */
  restart(): void {
    this.motion.reset();
  }

  /**
   * The decision for the frame at `at`, given the tracks the tracker holds and the input size of the
   * model its regions are cut for. Without `crops`, every frame it does not skip is detected whole.
   */
  decide(
    frame: Frame,
    tracks: readonly LiveTrack[],
    input: InputSize,
    at: number,
    crops: boolean,
  ): GateDecision {
    const seen = tracks.filter((track) => !track.lost);
    // Without crops, a track whose box stayed put (a parked car, a bag, someone standing) keeps no
    // task awake: the motion stage watches the scene around it, and the refresh sees it still.
    const awake = crops ? seen.length > 0 : this.moving(seen, at).length > 0;
    const stilled = this.awake && !awake && seen.length > 0;
    this.awake = !crops && awake;
    if (this.awake) {
      // Detected whole whatever moves (below): the motion stage, which on a busy scene is all the
      // gate would add, only keeps the background learned, on one frame a second.
      if (at - this.lastLearnedAt >= AWAKE_LEARN_MS) {
        this.motion.detect(frame);
        this.lastLearnedAt = at;
      }
      this.active(at);
      return this.full('motion', at);
    }
    // Tracks that stopped moving are still objects the background never held: it is learned afresh
    // with them in it, or they would read as motion until absorbed.
    if (stilled) this.motion.reset();
    // Frames that only teach the background find nothing: so is the frame that completes it, and a scene change.
    const warming = this.motion.warming;
    const blobs = this.motion.detect(frame);
    if (blobs.length > 0 || awake || this.lastActiveAt === null) this.active(at);
    this.rests = at - (this.lastActiveAt ?? at) >= REST_AFTER_MS;
    if (warming || this.motion.warming) return this.full('warmup', at);
    if (at - this.lastFullAt >= this.refreshMs) {
      // An empty resting scene is refreshed less and less often; anything seen or moving resets it.
      this.refreshMs =
        this.rests && seen.length === 0 ? Math.min(2 * this.refreshMs, QUIET_REFRESH_MS) : FULL_REFRESH_MS;
      return this.full('refresh', at);
    }
    if (!crops) {
      // Without crops the gate spares only frames with nothing moving in them: a frame where anything
      // moves is detected as without the gate, so its tracks and alarms stay the full-frame ones. A
      // resting frame with still tracks runs no detector but carries them (no regions): the tracker
      // holds them unaged and the rules go on timing them frame by frame, as a stay or a left object needs.
      if (blobs.length > 0 || !this.rests) return this.full('motion', at);
      return seen.length > 0 ? { kind: 'regions', regions: [] } : { kind: 'skip' };
    }
    const moving = this.moving(tracks, at);
    const regions = mergeRegions(
      [...blobs, ...moving.map((track) => track.box)].map((box) => padRegion(box, frame)),
    );
    if (regions.length === 0 && this.rests) return { kind: 'skip' };
    if (regions.length > MAX_REGIONS || planTiles(regions, input).length > MAX_REGION_TILES)
      return this.full('busy', at);
    return { kind: 'regions', regions };
  }

  /** Counts a frame as the pipeline handled it: the model inferences it took and the share of the frame they saw. */
  record(kind: GateDecision['kind'], runs: number, area: number, at: number): void {
    if (kind === 'skip') this.counts.skipped += 1;
    else if (kind === 'regions') this.counts.regions += 1;
    else this.counts.full += 1;
    this.looked.push({ at, reached: kind !== 'skip', runs, area });
    while ((this.looked[0]?.at ?? at) < at - WINDOW_MS) this.looked.shift();
  }

  /** The gate's figures for health; `enabled` is the pipeline's to say. */
  health(enabled: boolean, now: number): GateHealth {
    const recent = this.looked.filter((frame) => now - frame.at <= WINDOW_MS);
    const seconds = WINDOW_MS / 1000;
    const sum = (pick: (frame: Looked) => number) => recent.reduce((total, frame) => total + pick(frame), 0);
    return {
      enabled,
      resting: enabled && this.rests,
      rate_fps: sum((frame) => (frame.reached ? 1 : 0)) / seconds,
      frames_skipped: this.counts.skipped,
      frames_regions: this.counts.regions,
      frames_full: this.counts.full,
      detector_runs_per_s: sum((frame) => frame.runs) / seconds,
      refresh_s: enabled ? this.refreshMs / 1000 : 0,
      area_fraction: recent.length > 0 ? sum((frame) => frame.area) / recent.length : 0,
    };
  }

  /** Something moved or is tracked at `at`: the task is awake, and whole frames come every FULL_REFRESH_MS. */
  private active(at: number): void {
    this.lastActiveAt = at;
    this.rests = false;
    this.refreshMs = FULL_REFRESH_MS;
  }

  private full(reason: FullReason, at: number): GateDecision {
    this.lastFullAt = at;
    return { kind: 'full', reason };
  }

  /** The tracks that moved within STATIONARY_AFTER_MS; forgets tracks the tracker no longer holds. */
  private moving(tracks: readonly LiveTrack[], at: number): LiveTrack[] {
    const held = new Set<string>();
    const moving: LiveTrack[] = [];
    for (const track of tracks) {
      held.add(track.trackId);
      const { x1, y1, x2, y2 } = track.box;
      const cx = (x1 + x2) / 2;
      const cy = (y1 + y2) / 2;
      let anchor = this.anchors.get(track.trackId);
      const shifted =
        !anchor ||
        Math.abs(cx - anchor.cx) > STATIONARY_SHIFT_SHARE * (x2 - x1) ||
        Math.abs(cy - anchor.cy) > STATIONARY_SHIFT_SHARE * (y2 - y1);
      if (!anchor || shifted) {
        anchor = { cx, cy, since: at };
        this.anchors.set(track.trackId, anchor);
      }
      if (at - anchor.since < STATIONARY_AFTER_MS) moving.push(track);
    }
    for (const trackId of this.anchors.keys()) if (!held.has(trackId)) this.anchors.delete(trackId);
    return moving;
  }
}
