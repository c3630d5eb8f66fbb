import type { ModelSpec } from '../packages/manifest';
import type { Detection } from './types';

/** What a worker needs to run an ONNX model: its cache key, weights and manifest spec. */
export interface OnnxModelRef {
  key: string;
  file: string;
  spec: ModelSpec;
}

/** Time spent per stage of one detection, in ms. */
export interface DetectTiming {
  preprocessMs: number;
  inferenceMs: number;
  postprocessMs: number;
}

/** Main thread -> worker: a frame to analyse, or the order to release every session and end. */
export type WorkerMessage = DetectRequest | { close: true };

/** The frame's pixels are transferred, not copied. */
export interface DetectRequest {
  id: number;
  model: OnnxModelRef;
  pixels: ArrayBuffer;
  width: number;
  height: number;
}

/** Worker -> main thread. The pixels come back so the caller can draw on the same frame. */
export type DetectReply =
  | { id: number; pixels: ArrayBuffer; detections: Detection[]; timing: DetectTiming }
  | { id: number; pixels: ArrayBuffer; error: string };

export interface WorkerOptions {
  intraOpThreads: number;
}
