import type { Box, TrackedObject } from '../vision/types';
import { addScore, type Histogram, median } from './histogram';
import { OPTIMIZATION_LIMITS } from './limits';

interface TrackLife {
  classIndex: number;
  sightings: number;
  /** The run's frame number of the last sighting. */
  lastSeq: number;
  maxScore: number;
  scores: Histogram;
  lastBox: Box;
  vanishReported: boolean;
}

/** A young track that stopped being seen: its last sighting is a flicker sample. */
export interface Vanished {
  trackId: string;
  classIndex: number;
  lastSeq: number;
  box: Box;
}

/** How a track's life is judged: stable (by its median score), flickering (by its highest), or neither. */
export interface Judged {
  classIndex: number;
  kind: 'stable' | 'flicker';
  score: number;
}

/**
 * The lives of one model's tracks as a run sees them, frame by frame: how often each track was seen
 * and with which scores, which young ones vanished, and, once the tracker has let a track go, whether
 * it was stable or flickered.
 */
export class TrackBook {
  private readonly tracks = new Map<string, TrackLife>();
  private seq = 0;

  observe(seq: number, tracked: readonly TrackedObject[]): { vanished: Vanished[]; finished: Judged[] } {
    this.seq = seq;
    for (const object of tracked) {
      let life = this.tracks.get(object.trackId);
      if (!life) {
        life = {
          classIndex: object.classIndex,
          sightings: 0,
          lastSeq: seq,
          maxScore: 0,
          scores: {},
          lastBox: object,
          vanishReported: false,
        };
        this.tracks.set(object.trackId, life);
      }
      life.sightings += 1;
      life.lastSeq = seq;
      life.maxScore = Math.max(life.maxScore, object.score);
      addScore(life.scores, object.score);
      life.lastBox = { x1: object.x1, y1: object.y1, x2: object.x2, y2: object.y2 };
    }
    const vanished: Vanished[] = [];
    const finished: Judged[] = [];
    const { vanishFrames, flickerMaxSightings, forgetFrames } = OPTIMIZATION_LIMITS;
    for (const [trackId, life] of this.tracks) {
      const unseen = seq - life.lastSeq;
      if (!life.vanishReported && unseen >= vanishFrames && life.sightings <= flickerMaxSightings) {
        life.vanishReported = true;
        vanished.push({ trackId, classIndex: life.classIndex, lastSeq: life.lastSeq, box: life.lastBox });
      }
      if (unseen > forgetFrames) {
        this.tracks.delete(trackId);
        const judged = this.judge(life);
        if (judged) finished.push(judged);
      }
    }
    return { vanished, finished };
  }

  /** The tracks still followed, judged as if the run ended now. */
  judgeFollowed(): Judged[] {
    return [...this.tracks.values()].map((life) => this.judge(life)).filter((j): j is Judged => j !== null);
  }

  private judge(life: TrackLife): Judged | null {
    const { stableMinSightings, flickerMaxSightings, vanishFrames } = OPTIMIZATION_LIMITS;
    if (life.sightings >= stableMinSightings)
      return { classIndex: life.classIndex, kind: 'stable', score: median(life.scores) };
    const gone = this.seq - life.lastSeq >= vanishFrames;
    if (gone && life.sightings <= flickerMaxSightings)
      return { classIndex: life.classIndex, kind: 'flicker', score: life.maxScore };
    return null;
  }
}
