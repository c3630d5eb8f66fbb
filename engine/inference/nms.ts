import type { Box, Detection } from '../vision/types';
import { type Candidate, decodeOutputs, type InputSize } from './decode';
import type { OnnxFamily } from './families';
import { type LetterboxInfo, undoLetterbox } from './letterbox';
import type { OutputTensor } from './outputs';

/** Intersection over union; 0 when both boxes are empty. */
export function iou(a: Box, b: Box): number {
  const width = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const height = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (width <= 0 || height <= 0) return 0;
  const intersection = width * height;
  const union = (a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - intersection;
  return union > 0 ? intersection / union : 0;
}

/**
 * Greedy non-maximum suppression: best score first, a box is dropped when its IoU with a kept box
 * exceeds iouThreshold (equal is kept). Only boxes of the same class compete unless classAgnostic.
 * Returns the kept boxes sorted by score, highest first.
 */
export function nms<T extends Candidate>(
  candidates: readonly T[],
  iouThreshold: number,
  classAgnostic = false,
): T[] {
  const sorted = [...candidates].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const candidate of sorted) {
    const suppressed = kept.some(
      (k) => (classAgnostic || k.classIndex === candidate.classIndex) && iou(k, candidate) > iouThreshold,
    );
    if (!suppressed) kept.push(candidate);
  }
  return kept;
}

/** What postprocess needs of a manifest model; an ONNX ModelSpec with its input fits as is. */
export interface DetectorSettings {
  family: OnnxFamily;
  input: InputSize;
  score_threshold: number;
  nms_iou: number;
  class_agnostic_nms: boolean;
}

/** A model's outputs to detections in source-frame pixels: decode, NMS, undo the letterbox, clip. */
export function postprocess(
  outputs: readonly OutputTensor[],
  detector: DetectorSettings,
  /** How many labels the package lists for the model. */
  classes: number,
  letterboxInfo: LetterboxInfo,
  frameWidth: number,
  frameHeight: number,
): Detection[] {
  const candidates = decodeOutputs(
    detector.family,
    outputs,
    detector.input,
    classes,
    detector.score_threshold,
  );
  const detections: Detection[] = [];
  for (const candidate of nms(candidates, detector.nms_iou, detector.class_agnostic_nms)) {
    const box = undoLetterbox(candidate, letterboxInfo, frameWidth, frameHeight);
    // A box lying in the padding clips to nothing.
    if (box.x2 <= box.x1 || box.y2 <= box.y1) continue;
    detections.push({ ...box, score: candidate.score, classIndex: candidate.classIndex });
  }
  return detections;
}
