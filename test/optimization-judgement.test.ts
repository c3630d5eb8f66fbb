import { describe, expect, it } from 'vitest';
import { DomainError } from '../engine/domain-error';
import { judge, summaryVerdict } from '../engine/optimization/judgement';
import type { Annotation } from '../engine/optimization/schema';

/** Judging a sample detection by detection, and marking what the model missed (defect 11). */

const detection = (x: number, hard: boolean, verdict: Annotation['verdict'] = 'none'): Annotation => ({
  class_id: '0',
  label: 'person',
  score: 0.5,
  bbox: [x, 10, 20, 40],
  track_id: null,
  hard,
  verdict,
});
const sample = (annotations: Annotation[]) => ({
  annotations,
  missed: [],
  verdict: 'none' as const,
  width: 640,
  height: 480,
});
const labels = ['person', 'bicycle', 'car'];

describe('sample judgement', () => {
  it('judges the hard detections with one verdict, then single ones by their place', () => {
    const judged = judge(
      sample([detection(1, true), detection(50, false), detection(90, true)]),
      {
        verdict: 'right',
        detections: [{ index: 2, verdict: 'wrong' }],
      },
      labels,
    );
    expect(judged).toEqual({
      annotations: [detection(1, true, 'right'), detection(50, false), detection(90, true, 'wrong')],
      missed: [],
      verdict: 'wrong',
    });
  });

  it('judges every detection when none is hard, and keeps a whole verdict on a frame without any', () => {
    expect(judge(sample([detection(1, false)]), { verdict: 'right' }, labels).annotations).toEqual([
      detection(1, false, 'right'),
    ]);
    expect(judge(sample([]), { verdict: 'wrong' }, labels).verdict).toBe('wrong');
  });

  it('marks missed objects with their label, and a missed object makes the sample wrong', () => {
    const judged = judge(
      sample([detection(1, true, 'right')]),
      { missed: [{ class_id: '2', bbox: [100, 100, 50, 30] }] },
      labels,
    );
    expect(judged.missed).toEqual([{ class_id: '2', label: 'car', bbox: [100, 100, 50, 30] }]);
    expect(judged.verdict).toBe('wrong');
    // An empty list clears them; the detection's verdict is what is left.
    expect(
      judge({ ...sample(judged.annotations), missed: judged.missed }, { missed: [] }, labels),
    ).toMatchObject({
      missed: [],
      verdict: 'right',
    });
  });

  it('refuses a place past the detections, a class the model lacks and a box outside the frame', () => {
    const refusal = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return error instanceof DomainError ? [error.kind, error.details.field] : error;
      }
      return 'accepted';
    };
    const one = sample([detection(1, true)]);
    expect(refusal(() => judge(one, { detections: [{ index: 1, verdict: 'right' }] }, labels))).toEqual([
      'optimization.invalid_judgement',
      'detections[0].index',
    ]);
    for (const class_id of ['3', '-1', '1.0', 'car'])
      expect(refusal(() => judge(one, { missed: [{ class_id, bbox: [0, 0, 5, 5] }] }, labels))).toEqual([
        'optimization.invalid_judgement',
        'missed[0].class_id',
      ]);
    for (const bbox of [
      [630, 0, 20, 5],
      [0, 470, 5, 20],
      [0, 0, 0, 5],
    ])
      expect(refusal(() => judge(one, { missed: [{ class_id: '0', bbox }] }, labels))).toEqual([
        'optimization.invalid_judgement',
        'missed[0].bbox',
      ]);
  });

  it('sums up a sample: wrong before right before none', () => {
    expect(summaryVerdict([detection(1, true, 'right'), detection(2, true, 'wrong')], [], 'none')).toBe(
      'wrong',
    );
    expect(summaryVerdict([detection(1, true, 'right'), detection(2, true)], [], 'none')).toBe('right');
    expect(summaryVerdict([detection(1, true)], [], 'right')).toBe('none');
  });
});
