import type { Box, Detection, TrackedObject } from '../vision/types';
import { assign } from './assignment';
import { KalmanBoxFilter } from './kalman';

export interface TrackerOptions {
  /** Detections scoring at least this are matched first and may start tracks. */
  highThreshold: number;
  /** Detections below this are ignored; between low and high they can only keep a followed track alive. */
  lowThreshold: number;
  /** An unmatched high detection starts a track only from this score. */
  newTrackThreshold: number;
  /** Least IoU between a track's predicted box and a high detection (ByteTrack's match_thresh 0.8 = 1 - 0.2). */
  matchIou: number;
  /** Least IoU for a low detection; stricter because such boxes are less reliable. */
  lowMatchIou: number;
  /** Least IoU for a track born in the previous frame, which has no velocity estimate yet. */
  tentativeMatchIou: number;
  /** A track unmatched for more than this many analysed frames is dropped. */
  maxLostFrames: number;
  /** Hits from which a track is confirmed; it stays confirmed afterwards. */
  confirmHits: number;
}

export const DEFAULT_TRACKER_OPTIONS: Readonly<TrackerOptions> = {
  highThreshold: 0.5,
  lowThreshold: 0.1,
  newTrackThreshold: 0.6,
  matchIou: 0.2,
  lowMatchIou: 0.5,
  tentativeMatchIou: 0.3,
  maxLostFrames: 30,
  confirmHits: 3,
};

/** tentative: born last frame, not seen again yet; tracked: matched last frame; lost: coasting on prediction. */
type TrackState = 'tentative' | 'tracked' | 'lost';

class Track {
  readonly filter: KalmanBoxFilter;
  /** The filter's estimate for the current frame, rewritten after each predict. */
  readonly predicted: Box = { x1: 0, y1: 0, x2: 0, y2: 0 };
  state: TrackState = 'tentative';
  hits = 1;
  framesLost = 0;
  /** The detection it was last matched to (a carried track is reported at it). */
  last: Detection;
  matchedThisFrame = true;
  confirmed: boolean;

  constructor(
    readonly id: string,
    readonly classIndex: number,
    detection: Detection,
    confirmHits: number,
  ) {
    this.filter = new KalmanBoxFilter(detection);
    this.last = detection;
    this.confirmed = confirmHits <= 1;
  }

  hit(detection: Detection, confirmHits: number): void {
    this.filter.update(detection);
    this.last = detection;
    this.state = 'tracked';
    this.hits++;
    this.framesLost = 0;
    this.matchedThisFrame = true;
    if (this.hits >= confirmHits) this.confirmed = true;
  }
}

/** Multi-object tracking by detection after ByteTrack (Zhang et al. 2022), per class. */
export class ByteTracker {
  private readonly options: TrackerOptions;
  private tracks: Track[] = [];
  /** Reused cost matrix storage, grown on demand. */
  private cost = new Float64Array(256);

  constructor(
    options: Partial<TrackerOptions> = {},
    private readonly nextId: () => string,
  ) {
    this.options = { ...DEFAULT_TRACKER_OPTIONS, ...options };
  }

  /** Tracks still held: seen this frame, born last frame, or lost for at most maxLostFrames. */
  get activeTracks(): number {
    return this.tracks.length;
  }

  reset(): void {
    this.tracks = [];
  }

  /** The tracks held now, each at the box it was last matched to; `lost`: coasting, not seen on the last frame. */
  liveBoxes(): Array<{ trackId: string; box: Box; lost: boolean }> {
    return this.tracks.map((track) => ({ trackId: track.id, box: track.last, lost: track.state === 'lost' }));
  }

  /**
   * Consumes one analysed frame; returns its detections that belong to a track, in input order.
   * With `covered` (a frame detected on regions only), a followed track whose last box the detector
   * did not look at this frame is carried: not predicted, not aged, and reported after the frame's
   * own at its last box, as DeepStream carries tracks between inference intervals. Without it the
   * whole frame was looked at.
   */
  update(detections: readonly Detection[], covered?: (box: Box) => boolean): TrackedObject[] {
    const o = this.options;
    const carried = covered
      ? this.tracks.filter((track) => track.state === 'tracked' && !covered(track.last))
      : [];
    const looked = carried.length > 0 ? this.tracks.filter((track) => !carried.includes(track)) : this.tracks;
    for (const track of looked) {
      track.filter.predict(track.state === 'lost');
      track.filter.toBox(track.predicted);
      track.matchedThisFrame = false;
    }

    const high: number[] = [];
    const low: number[] = [];
    for (let i = 0; i < detections.length; i++) {
      const d = detections[i] as Detection;
      // A box without area would give the filter an infinite aspect ratio and poison its track.
      if (!(d.x2 > d.x1 && d.y2 > d.y1)) continue;
      if (d.score >= o.highThreshold) high.push(i);
      else if (d.score >= o.lowThreshold) low.push(i);
    }

    const trackOf: (Track | undefined)[] = new Array(detections.length);
    const established = looked.filter((t) => t.state !== 'tentative');
    const tentative = looked.filter((t) => t.state === 'tentative');
    // Lost tracks join the first pass so that a reappearing object gets its old id back.
    const highLeft = this.associate(established, high, detections, o.matchIou, trackOf);
    // Low scores are mostly occluded objects: they may only continue tracks followed until the last frame.
    const stillFollowed = established.filter((t) => !t.matchedThisFrame && t.state === 'tracked');
    this.associate(stillFollowed, low, detections, o.lowMatchIou, trackOf);
    const unclaimed = this.associate(tentative, highLeft, detections, o.tentativeMatchIou, trackOf);

    const kept: Track[] = [...carried];
    for (const track of looked) {
      if (!track.matchedThisFrame) {
        // A single sighting that did not recur is taken for a false positive.
        if (track.state === 'tentative') continue;
        track.state = 'lost';
        track.framesLost++;
        if (track.framesLost > o.maxLostFrames) continue;
      }
      kept.push(track);
    }
    for (const i of unclaimed) {
      const d = detections[i] as Detection;
      if (d.score < o.newTrackThreshold) continue;
      const track = new Track(this.nextId(), d.classIndex, d, o.confirmHits);
      kept.push(track);
      trackOf[i] = track;
    }
    this.tracks = kept;

    const result: TrackedObject[] = [];
    for (let i = 0; i < detections.length; i++) {
      const track = trackOf[i];
      if (track === undefined) continue;
      const d = detections[i] as Detection;
      result.push({
        x1: d.x1,
        y1: d.y1,
        x2: d.x2,
        y2: d.y2,
        score: d.score,
        classIndex: d.classIndex,
        trackId: track.id,
        hits: track.hits,
        confirmed: track.confirmed,
      });
    }
    for (const track of carried) {
      const { x1, y1, x2, y2, score, classIndex } = track.last;
      result.push({
        x1,
        y1,
        x2,
        y2,
        score,
        classIndex,
        trackId: track.id,
        hits: track.hits,
        confirmed: track.confirmed,
      });
    }
    return result;
  }

  /**
   * Optimal IoU matching of tracks to the given detections (indices into detections), same class only.
   * Matched tracks take their detection; returns the indices of the detections left over.
   */
  private associate(
    tracks: readonly Track[],
    indices: readonly number[],
    detections: readonly Detection[],
    minIou: number,
    trackOf: (Track | undefined)[],
  ): readonly number[] {
    const rows = tracks.length;
    const cols = indices.length;
    if (rows === 0 || cols === 0) return indices;
    if (this.cost.length < rows * cols) this.cost = new Float64Array(rows * cols * 2);
    const cost = this.cost.subarray(0, rows * cols);
    for (let r = 0; r < rows; r++) {
      const track = tracks[r] as Track;
      for (let c = 0; c < cols; c++) {
        const d = detections[indices[c] as number] as Detection;
        cost[r * cols + c] =
          d.classIndex === track.classIndex ? 1 - iou(track.predicted, d) : Number.POSITIVE_INFINITY;
      }
    }
    const { matches, unmatchedCols } = assign(cost, rows, cols, 1 - minIou);
    for (const [r, c] of matches) {
      const index = indices[c] as number;
      const track = tracks[r] as Track;
      track.hit(detections[index] as Detection, this.options.confirmHits);
      trackOf[index] = track;
    }
    return unmatchedCols.map((c) => indices[c] as number);
  }
}

function iou(a: Box, b: Box): number {
  const w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0;
  const intersection = w * h;
  return intersection / ((a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - intersection);
}
