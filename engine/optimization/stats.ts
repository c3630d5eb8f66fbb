import { addScore, type Histogram, merge } from './histogram';

/** What a run learnt about one class of one app: the score distributions the proposal is made from. */
export interface ClassStats {
  /** The median score of each stable track (seen long: likely a real object). */
  stable: Histogram;
  /** The highest score of each flickering track (appeared and vanished: likely a false detection). */
  flicker: Histogram;
  /** Every detection of the class in the app's zone and size bounds, whatever its score. */
  detections: Histogram;
}

/** Per app_id, per class_id. Saved as JSON with the run. */
export type RunStats = Record<string, Record<string, ClassStats>>;

function classStats(stats: RunStats, appId: string, classId: string): ClassStats {
  const app = stats[appId] ?? {};
  stats[appId] = app;
  const entry = app[classId] ?? { stable: {}, flicker: {}, detections: {} };
  app[classId] = entry;
  return entry;
}

export function addTo(
  stats: RunStats,
  appId: string,
  classId: string,
  kind: keyof ClassStats,
  score: number,
) {
  addScore(classStats(stats, appId, classId)[kind], score);
}

export function cloneStats(stats: RunStats): RunStats {
  const copy: RunStats = {};
  for (const [appId, classes] of Object.entries(stats)) {
    for (const [classId, entry] of Object.entries(classes)) {
      const target = classStats(copy, appId, classId);
      merge(target.stable, entry.stable);
      merge(target.flicker, entry.flicker);
      merge(target.detections, entry.detections);
    }
  }
  return copy;
}
