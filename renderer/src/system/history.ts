/**
 * The system page's short history: one sample per reading of GET /api/system and the task list,
 * kept for the last few minutes. Pure: the screen's store appends, the charts read.
 */
import type { SystemInfo } from '../../../engine/contract';
import { isRunning, type TaskSummary } from '../api';

/** One camera's figures at one reading. */
export interface CameraSample {
  /** Frames analysed per second. */
  fps: number;
  /** Frames dropped per second since the previous reading (analysis busy). */
  dropsPerS: number;
  /** Frames dropped since the task started, kept to derive the next reading's rate. */
  droppedTotal: number;
}

export interface SystemSample {
  /** ms since the epoch. */
  at: number;
  /** Engine and inference hosts, % of the whole machine (all cores = 100). */
  cpuPercent: number;
  engineRssBytes: number;
  outboxPending: number;
  /** Mean inference ms per model; null before its first run. */
  inferenceMs: Record<string, number | null>;
  /** Running video tasks by task id. */
  cameras: Record<string, CameraSample>;
}

/** About five minutes at one reading every two seconds. */
export const HISTORY_LENGTH = 150;

export function sampleOf(
  system: SystemInfo,
  tasks: readonly TaskSummary[],
  at: number,
  previous: SystemSample | undefined,
): SystemSample {
  const cameras: Record<string, CameraSample> = {};
  for (const task of tasks) {
    if (task.health.stream === null || !isRunning(task)) continue;
    const before = previous?.cameras[task.task_id];
    const seconds = previous ? (at - previous.at) / 1000 : 0;
    const dropped = task.health.frames_dropped;
    cameras[task.task_id] = {
      fps: task.health.analysed_fps,
      dropsPerS: before && seconds > 0 ? Math.max(0, dropped - before.droppedTotal) / seconds : 0,
      droppedTotal: dropped,
    };
  }
  return {
    at,
    cpuPercent: system.cpu.engine_percent / Math.max(1, system.cpu.cores),
    engineRssBytes: system.memory.engine_rss_bytes,
    outboxPending: system.outbox.pending,
    inferenceMs: Object.fromEntries(system.models.map((model) => [model.model, model.inference_ms])),
    cameras,
  };
}

/** The history with a sample appended, the oldest ones beyond `limit` dropped. */
export function appendSample(
  history: readonly SystemSample[],
  sample: SystemSample,
  limit = HISTORY_LENGTH,
): SystemSample[] {
  return [...history, sample].slice(-limit);
}

/** One figure of each sample, for a chart; null where the sample lacks it. */
export function seriesOf(
  history: readonly SystemSample[],
  pick: (sample: SystemSample) => number | null | undefined,
): Array<number | null> {
  return history.map((sample) => pick(sample) ?? null);
}
