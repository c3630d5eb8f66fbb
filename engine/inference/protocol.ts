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

/** Main thread -> worker: a frame to analyse, a model to check, or the order to release every session and end. */
export type WorkerMessage = DetectRequest | CheckRequest | { close: true };

/** Load the model on its own, run it once on a padding frame, and compare what it outputs with the manifest. */
export interface CheckRequest {
  id: number;
  check: OnnxModelRef;
  /** How many labels the package lists for the model. */
  labels: number;
}

/** Worker -> main thread: the model's problem in plain words, or none. */
export interface CheckReply {
  id: number;
  problem: string | null;
}

/** The frame's pixels are shared (a SharedArrayBuffer) or transferred, never copied. */
export interface DetectRequest {
  id: number;
  model: OnnxModelRef;
  pixels: ArrayBuffer | SharedArrayBuffer;
  width: number;
  height: number;
}

/** Worker -> main thread. Transferred pixels come back so the caller can draw on the same frame. */
export type DetectReply =
  | { id: number; pixels?: ArrayBuffer; detections: Detection[]; timing: DetectTiming }
  | { id: number; pixels?: ArrayBuffer; error: string };

export interface WorkerOptions {
  intraOpThreads: number;
}
