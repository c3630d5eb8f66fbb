import type { TaskHealth } from '../contract/health';

/**
 * What a camera costs in cores, from the figures its node already measures: its health (the source's
 * size and rate, the decode path, the analysis rate, the inference time) and, where the node reads it,
 * the CPU of the task's ffmpeg processes. Placement packs cameras by this figure, so it must be the
 * camera's demand, not what a starved node happens to give it: the rate is the task's target, not the
 * rate it reached.
 */

/**
 * A camera never measured (no health yet: not started, or started on a node that has not reported):
 * one 1080p25 H.264 camera analysed at 5 fps, the case bench:capacity measures. One engine held 7-9 such
 * cameras on 2 cores, a quarter of a core each; it splits as the two figures below.
 */
export const UNMEASURED_CAMERA_CORES = 0.25;
/**
 * Software decoding of 1080p25 H.264 by the engine's stream reader: 13.8-15.7 % of a core a camera
 * (bench:decode, docs/gpu.md); rounded up.
 */
export const DECODE_CORES_1080P25 = 0.15;
/** The pixel rate DECODE_CORES_1080P25 was measured at: decoding scales with it. */
const PIXELS_1080P25 = 1920 * 1080 * 25;
/**
 * What is left on the CPU when a hwaccel decodes (copying frames back, dropping to the analysis rate,
 * scaling): 4.2 % against 13.8 % in software on the lent H100 (docs/gpu.md), about a third.
 */
export const HW_DECODE_SHARE = 0.35;
/** One inference before the first is timed: UNMEASURED_CAMERA_CORES less decode, at 5 fps. */
export const UNMEASURED_INFERENCE_MS = ((UNMEASURED_CAMERA_CORES - DECODE_CORES_1080P25) / 5) * 1000;
/** One annotated 720p AI video's encoder: 16-34 % of a core (bench:live, docs/api.md); the middle. */
export const AI_VIDEO_CORES = 0.25;
/**
 * The least a camera costs, whatever it reports: a 0.1 fps camera still holds an ffmpeg and a pipeline,
 * and a cost of 0 would let one node take every such camera.
 */
export const MIN_CAMERA_CORES = 0.02;

/** The health figures a camera's cost is read from. */
export type CostHealth = Pick<
  TaskHealth,
  'stream' | 'target_fps' | 'analysed_fps' | 'inference_ms' | 'ai_video'
>;

export interface CostInputs {
  /** The camera's health; null when it has none yet (never ran, or its node has not reported). */
  health: CostHealth | null;
  /**
   * The models it runs on each analysed frame. health.inference_ms is the time of the last model a
   * frame ran (task-pipeline.ts), so a frame of a two-model task costs about twice it.
   */
  models: number;
  /**
   * Cores of the task's ffmpeg processes (stream reader, AI video encoders and pushes) measured by its
   * node over its last window (process-stats.ts: CPU ms gained / ms elapsed); null or absent when not
   * measured, and the decode is then estimated from the stream's pixel rate and decode path.
   */
  ffmpegCores?: number | null;
}

/** The camera's cost in cores: decode (or its ffmpegs, measured) + inference, at its target rate. */
export function taskCost({ health, models, ffmpegCores }: CostInputs): number {
  if (!health) return UNMEASURED_CAMERA_CORES;
  const measured = ffmpegCores != null && Number.isFinite(ffmpegCores) && ffmpegCores >= 0;
  const media = measured ? ffmpegCores : decodeCores(health) + health.ai_video.length * AI_VIDEO_CORES;
  const sourceFps = health.stream?.fps ?? 0;
  const target = health.target_fps ?? health.analysed_fps;
  // A source slower than the task's rate caps the frames there are to analyse.
  const rate = sourceFps > 0 ? Math.min(target, sourceFps) : target;
  const inference = (rate * Math.max(1, models) * (health.inference_ms ?? UNMEASURED_INFERENCE_MS)) / 1000;
  return Math.max(MIN_CAMERA_CORES, media + inference);
}

/** Decoding the stream, estimated from its pixel rate and path; a 1080p25 camera before its first frame. */
function decodeCores(health: CostHealth): number {
  const stream = health.stream;
  if (!stream?.width || !stream.height || !(stream.fps > 0)) return DECODE_CORES_1080P25;
  const software = (DECODE_CORES_1080P25 * stream.width * stream.height * stream.fps) / PIXELS_1080P25;
  return stream.decoder.hwaccel === 'none' ? software : software * HW_DECODE_SHARE;
}
