import type { InputSize } from '../inference/decode';
import { isOnnxFamily } from '../inference/families';
import { MotionDetector } from '../inference/motion';
import type { InferencePool } from '../inference/pool';
import type { InstalledModel } from '../packages/registry';
import type { Detection, Frame } from '../vision/types';

/** One model as a task runs it. detect() resolves with the frame to draw on (the one it was given). */
export interface TaskDetector {
  readonly key: string;
  /**
   * Set when the model can run on crops of the frame (motion-gate.ts): its input size, which crops are
   * cut at, and its NMS, which merges boxes of one object cut by neighbouring crops. Unset: whole frames only.
   */
  readonly regions?: { input: InputSize; nmsIou: number; classAgnostic: boolean };
  /** `due`: when the frame arrived (performance.now()), its place in the shared inference queue; default now. */
  detect(frame: Frame, due?: number): Promise<{ detections: Detection[]; frame: Frame; inferenceMs: number }>;
}

/** ONNX models run in the shared pool; weight-free motion keeps its background model per task. */
export function createDetector(model: InstalledModel, pool: InferencePool): TaskDetector {
  const { key, name, classes, spec, file } = model;
  if (isOnnxFamily(spec.family)) {
    if (!file) throw new Error(`model ${key} has no weights file`);
    return {
      key,
      ...(spec.input && {
        regions: { input: spec.input, nmsIou: spec.nms_iou, classAgnostic: spec.class_agnostic_nms },
      }),
      async detect(frame, due) {
        const result = await pool.detect({ key, name, classes, file, spec }, frame, due);
        return { detections: result.detections, frame: result.frame, inferenceMs: result.timing.inferenceMs };
      },
    };
  }
  if (spec.family === 'motion') {
    const motion = new MotionDetector();
    return {
      key,
      async detect(frame) {
        const start = performance.now();
        const detections = motion.detect(frame).filter((d) => d.score >= spec.score_threshold);
        return { detections, frame, inferenceMs: performance.now() - start };
      },
    };
  }
  throw new Error(`model family "${spec.family}" does not analyse video`);
}
