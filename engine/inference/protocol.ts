import type { ModelSpec } from '../packages/manifest';
import type { Detection } from '../vision/types';
import type { ExecutionProvider, ExecutionProviderSetting } from './providers';

/** What an inference host needs to run an ONNX model: its cache key, weights and manifest spec. */
export interface OnnxModelRef {
  key: string;
  /** How the engine's figures name it (package/model); the key (a path) when absent. */
  name?: string;
  /** How many labels the package lists for it (generic YOLO tells its layouts apart by this). */
  classes?: number;
  file: string;
  spec: ModelSpec;
}

/** Time spent per stage of one detection, in ms. */
export interface DetectTiming {
  preprocessMs: number;
  inferenceMs: number;
  postprocessMs: number;
}

/**
 * Engine -> host, on the host's stdin: a frame to analyse (its `bytes` of packed RGB follow the
 * request on the stream) or a model to check. See request-stream.ts for the framing.
 */
export type HostRequest = DetectRequest | ChangeMapRequest | CheckRequest;

export interface DetectRequest {
  id: number;
  kind: 'detect';
  model: OnnxModelRef;
  width: number;
  height: number;
  /** Pixel bytes that follow: width * height * 3. */
  bytes: number;
}

/**
 * A change model (family siamese-change) on one tile pair of its input size: the pixels that follow
 * are image A's packed RGB, then image B's, width * height * 3 each.
 */
export interface ChangeMapRequest {
  id: number;
  kind: 'change-map';
  model: OnnxModelRef;
  width: number;
  height: number;
  /** Pixel bytes that follow: 2 * width * height * 3. */
  bytes: number;
}

/** Load the model on its own, run it once on a blank frame, and compare what it outputs with the manifest. */
export interface CheckRequest {
  id: number;
  kind: 'check';
  model: OnnxModelRef;
  /** How many labels the package lists for the model. */
  labels: number;
}

/** Host -> engine, over the IPC channel: an answer to each request, in order. */
export type HostReply = DetectReply | ChangeMapReply | CheckReply;

/** Host -> engine, once, when it has started and reads requests. */
export interface HostReady {
  ready: true;
}

/** A request the host could not answer. */
export interface FailedReply {
  id: number;
  error: string;
  /** onnxruntime could not allocate what the model asked for: the host is over its memory bound. */
  outOfMemory?: boolean;
}

/** What every answered run says besides its result. */
interface RunReply {
  id: number;
  timing: DetectTiming;
  placement: Placement;
}

export type DetectReply = (RunReply & { detections: Detection[] }) | FailedReply;

/**
 * The tile's probability of change per pixel (row-major, width * height), quantised to 0..255 and
 * base64-encoded: the IPC channel carries JSON, where a byte per pixel stays small.
 */
export type ChangeMapReply = (RunReply & { changeMap: string }) | FailedReply;

/** The model's problem in plain words, or none. */
export interface CheckReply {
  id: number;
  problem: string | null;
  outOfMemory?: boolean;
}

/** Where a model's session runs, and why not where the setting asked (null when it does). */
export interface Placement {
  provider: ExecutionProvider;
  fallback: string | null;
}

/** What a host's memory watchdog writes on its stdout before it kills the host. */
export const OVER_MEMORY_MARK = 'inference host: over its memory bound\n';

/** How the engine starts a host (its one command-line argument, as JSON). */
export interface HostOptions {
  /** onnxruntime intra-op threads per session. */
  intraOpThreads: number;
  /**
   * Resident memory at which the host's own watchdog thread kills it, in MB; 0 when the kernel
   * bounds its memory already (Linux, prlimit), and no watchdog runs.
   */
  watchdogMb: number;
  /** Where sessions run (providers.ts). */
  provider: ExecutionProviderSetting;
}
