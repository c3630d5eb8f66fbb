import { describe, expect, it } from 'vitest';
import { addScore, binOf, type Histogram } from '../engine/optimization/histogram';
import { proposeThreshold } from '../engine/optimization/proposal';
import type { ClassStats } from '../engine/optimization/stats';

/** The threshold proposal on score distributions with a known best separation. */

const histogram = (scores: number[]): Histogram => {
  const h: Histogram = {};
  for (const score of scores) addScore(h, score);
  return h;
};
const round3 = (value: number) => Math.round(value * 1000) / 1000;
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i / 100);

/** Ten stable tracks with medians 0.70..0.79, ten flickering ones with highest scores 0.40..0.49. */
const separable: ClassStats = {
  stable: histogram(range(0.7, 10)),
  flicker: histogram(range(0.4, 10)),
  detections: histogram([0.35, 0.45, 0.55, 0.65, 0.75, 0.85]),
};

describe('threshold proposal', () => {
  it('proposes nothing without evidence, and counts the alarms as they are', () => {
    const proposal = proposeThreshold(
      0.5,
      { stable: {}, flicker: {}, detections: histogram([0.4, 0.6]) },
      [],
    );
    expect(proposal.proposed).toBeNull();
    expect(proposal.f1).toEqual({ current: null, proposed: null });
    expect(proposal.alarms).toEqual({ current: 1, proposed: 1, change: 0 });
  });

  it('separates stable from flickering tracks, moving the threshold as little as it can', () => {
    // Every threshold in (0.49, 0.70] separates them perfectly; the nearest to the current one wins.
    const raised = proposeThreshold(0.3, separable, []);
    expect(raised.proposed).toBe(0.5);
    expect(raised.f1.proposed).toBe(1);
    expect(raised.f1.current).toBeCloseTo(2 / 3, 3);
    expect(raised.basis).toEqual({ stable_tracks: 10, flickering_tracks: 10, right: 0, wrong: 0, missed: 0 });
    expect(raised.alarms).toEqual({ current: 6, proposed: 4, change: -2 });

    const lowered = proposeThreshold(0.9, separable, []);
    expect(lowered.proposed).toBe(0.7);
    expect(lowered.alarms).toEqual({ current: 0, proposed: 2, change: 2 });

    expect(proposeThreshold(0.6, separable, []).proposed).toBe(0.6);
  });

  it('counts verdicts: a detection judged wrong at 0.65 pushes the threshold above it', () => {
    const proposal = proposeThreshold(0.3, separable, [{ score: 0.65, verdict: 'wrong' }]);
    expect(proposal.proposed).toBe(0.66);
    expect(proposal.basis).toMatchObject({ right: 0, wrong: 1 });
    // Judged right instead, it joins the positives and keeps the threshold at or below it.
    const right = proposeThreshold(0.3, separable, [{ score: 0.65, verdict: 'right' }]);
    expect(right.proposed).toBe(0.5);
    expect(right.basis).toMatchObject({ right: 1, wrong: 0 });
  });

  it('counts missed objects as positives no threshold keeps: F1 lower everywhere, the threshold unmoved', () => {
    // Separable gives F1 1 at 0.5 (10 of 10 stable kept); 2 missed objects weigh 2 x verdictWeight (2).
    const proposal = proposeThreshold(0.3, separable, [], 2);
    expect(proposal.proposed).toBe(0.5);
    expect(proposal.f1.proposed).toBe(round3((2 * 10) / (2 * 10 + 4)));
    expect(proposal.basis).toMatchObject({ missed: 2 });
    // Missed objects alone are evidence that the model, not the threshold, falls short.
    const alone = proposeThreshold(0.4, undefined, [], 1);
    expect([alone.proposed, alone.f1]).toEqual([0.4, { current: 0, proposed: 0 }]);
  });

  it('keeps proposals inside (0, 1) whatever the scores', () => {
    const high: ClassStats = { stable: histogram([0.99]), flicker: histogram([0.98]), detections: {} };
    expect(proposeThreshold(1, high, []).proposed).toBe(0.95);
    const low: ClassStats = { stable: histogram([0.02]), flicker: {}, detections: {} };
    expect(proposeThreshold(0, low, []).proposed).toBe(0.05);
  });

  it('bins scores exactly at their hundredths despite binary fractions', () => {
    expect(binOf(0.29)).toBe(290);
    expect(binOf(0.55)).toBe(550);
    expect(binOf(1)).toBe(1000);
  });
});
