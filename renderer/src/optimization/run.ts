/** A run's figures as the status card shows them. */
import type { OptimizationView } from '../../../engine/contract';

export const isCollecting = (run: Pick<OptimizationView, 'status'>): boolean => run.status === 'running';

/** Whole seconds until a running run ends by its duration (0 once due; 0 for an ended run). */
export function secondsLeft(run: Pick<OptimizationView, 'status' | 'ends_at'>, now: number): number {
  return isCollecting(run) ? Math.max(0, Math.ceil((run.ends_at - now) / 1000)) : 0;
}

/** Share of the run's duration gone by, 0..1 (1 once it ended). */
export function elapsedShare(
  run: Pick<OptimizationView, 'status' | 'created_at' | 'ends_at'>,
  now: number,
): number {
  if (!isCollecting(run)) return 1;
  const span = run.ends_at - run.created_at;
  if (span <= 0) return 1;
  return Math.min(1, Math.max(0, (now - run.created_at) / span));
}

/** The run to show: the one chosen while it is listed, else the task's latest. */
export function chosenRun(runs: readonly OptimizationView[], runId: string | null): OptimizationView | null {
  return runs.find((run) => run.optimization_id === runId) ?? runs.at(-1) ?? null;
}

/** Apps of the task that a new run cannot take: each is in a run still collecting (40905). */
export function busyApps(runs: readonly OptimizationView[]): Map<string, string> {
  const busy = new Map<string, string>();
  for (const run of runs) {
    if (!isCollecting(run)) continue;
    for (const appId of run.app_ids) busy.set(appId, run.optimization_id);
  }
  return busy;
}

/** Bytes as megabytes with one decimal. */
export function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}
