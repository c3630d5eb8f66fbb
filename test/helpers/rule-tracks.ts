import type { ClassEntry } from '../../engine/rules/schema';
import type { TrackedObject } from '../../engine/vision/types';

/** Hand-made tracks for the rule tests: what the tracker hands the rules, placed by foot point. */

/** The person class of a rule: green, threshold 0.5, no size bounds. */
export const PERSON: ClassEntry = {
  class_id: '0',
  name: 'person',
  color: '#00ff00',
  threshold: 0.5,
  min_pixel: 0,
  max_pixel: 0,
};

/** A confirmed 20x40 box of class `classIndex` standing on `foot`, score 0.9. */
export const standing = (
  trackId: string,
  foot: readonly [number, number],
  classIndex = 0,
): TrackedObject => ({
  trackId,
  x1: foot[0] - 10,
  y1: foot[1] - 40,
  x2: foot[0] + 10,
  y2: foot[1],
  score: 0.9,
  classIndex,
  hits: 5,
  confirmed: true,
});
