import { addScore, atLeast, type Histogram, merge, total } from './histogram';
import { OPTIMIZATION_LIMITS } from './limits';
import type { ClassStats } from './stats';

/** An operator's verdict on one detection of a sample. */
export interface JudgedDetection {
  score: number;
  verdict: 'right' | 'wrong';
}

export interface ThresholdProposal {
  proposed: number | null;
  f1: { current: number | null; proposed: number | null };
  basis: { stable_tracks: number; flickering_tracks: number; right: number; wrong: number; missed: number };
  alarms: { current: number; proposed: number; change: number };
}

const EMPTY: ClassStats = { stable: {}, flicker: {}, detections: {} };

/**
 * The threshold that best separates likely-right detections from likely-wrong ones: stable tracks
 * (by their median score) and detections marked right are positives, flickering tracks (by their
 * highest score) and detections marked wrong are negatives. Every candidate from 0.05 to 0.95 in
 * steps of 0.01 is scored by F1 (a positive at or above it is kept, a negative at or above it is a
 * false alarm); the best wins, and among equals the one nearest the current threshold, so that no
 * evidence means no change. Objects the operator marked missed are positives no threshold keeps:
 * they lower F1 everywhere (the model, not the threshold, needs them).
 */
export function proposeThreshold(
  current: number,
  stats: ClassStats | undefined,
  judged: readonly JudgedDetection[],
  missedObjects = 0,
): ThresholdProposal {
  const { stable, flicker, detections } = stats ?? EMPTY;
  const positives: Histogram = {};
  const negatives: Histogram = {};
  merge(positives, stable);
  merge(negatives, flicker);
  for (const { score, verdict } of judged)
    addScore(verdict === 'right' ? positives : negatives, score, OPTIMIZATION_LIMITS.verdictWeight);

  const basis = {
    stable_tracks: total(stable),
    flickering_tracks: total(flicker),
    right: judged.filter((j) => j.verdict === 'right').length,
    wrong: judged.filter((j) => j.verdict === 'wrong').length,
    missed: missedObjects,
  };
  const passingNow = atLeast(detections, current);
  if (total(positives) + total(negatives) + missedObjects === 0) {
    return {
      proposed: null,
      f1: { current: null, proposed: null },
      basis,
      alarms: { current: passingNow, proposed: passingNow, change: 0 },
    };
  }

  const f1 = (threshold: number) => {
    const kept = atLeast(positives, threshold);
    const missed = total(positives) - kept + missedObjects * OPTIMIZATION_LIMITS.verdictWeight;
    const falseAlarms = atLeast(negatives, threshold);
    const denominator = 2 * kept + missed + falseAlarms;
    return denominator === 0 ? 0 : (2 * kept) / denominator;
  };
  let best = current;
  let bestF1 = Number.NEGATIVE_INFINITY;
  const { proposalMin, proposalMax } = OPTIMIZATION_LIMITS;
  for (let step = Math.round(proposalMin * 100); step <= Math.round(proposalMax * 100); step++) {
    const candidate = step / 100;
    const score = f1(candidate);
    const better =
      score > bestF1 + 1e-9 ||
      (Math.abs(score - bestF1) <= 1e-9 && Math.abs(candidate - current) < Math.abs(best - current));
    if (better) {
      best = candidate;
      bestF1 = score;
    }
  }
  const passingThen = atLeast(detections, best);
  return {
    proposed: best,
    f1: { current: round(f1(current)), proposed: round(bestF1) },
    basis,
    alarms: { current: passingNow, proposed: passingThen, change: passingThen - passingNow },
  };
}

const round = (value: number) => Math.round(value * 1000) / 1000;
