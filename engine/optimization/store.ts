import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '../domain-error';
import type { Db } from '../store/db';
import type { OptimizationErrorKind } from './optimization-error';
import type { Annotation, EndReason, RunStatus, SampleReason, Verdict } from './schema';
import type { RunStats } from './stats';

export interface RunRow {
  optimization_id: string;
  task_id: string;
  app_ids: string[];
  duration_s: number;
  max_samples: number;
  status: RunStatus;
  end_reason: EndReason;
  stats: RunStats;
  frames: number;
  dropped: number;
  sample_limit: 'max_samples' | 'disk' | null;
  created_at: number;
  ends_at: number;
  finished_at: number | null;
}

export interface SampleRow {
  sample_id: number;
  app_id: string;
  frame_id: number;
  timestamp: number;
  width: number;
  height: number;
  reasons: SampleReason[];
  annotations: Annotation[];
  bytes: number;
  verdict: Verdict;
  created_at: number;
}

export interface SampleTally {
  count: number;
  bytes: number;
  near_threshold: number;
  flicker: number;
  counter_toggle: number;
  right: number;
  wrong: number;
  none: number;
}

type StoredRun = Omit<RunRow, 'app_ids' | 'stats'> & { app_ids: string; stats: string };
type StoredSample = Omit<SampleRow, 'reasons' | 'annotations'> & { reasons: string; annotations: string };

const toRun = (row: StoredRun): RunRow => ({
  ...row,
  app_ids: JSON.parse(row.app_ids) as string[],
  stats: JSON.parse(row.stats) as RunStats,
});

const toSample = (row: StoredSample): SampleRow => ({
  ...row,
  reasons: row.reasons.split(',') as SampleReason[],
  annotations: JSON.parse(row.annotations) as Annotation[],
});

/**
 * Optimization runs and their samples: rows in SQLite (migration 4), each sample's source frame a
 * JPEG under <data-dir>/optimization/<optimization_id>/. An image is written before its row, so a
 * row always has its file; files a crash left without a row are swept at start. Runs go with their
 * task (foreign key), when the task leaves the listing.
 */
export class OptimizationStore {
  readonly root: string;

  constructor(
    private readonly db: Db,
    dataDir: string,
  ) {
    this.root = join(dataDir, 'optimization');
  }

  runDir(optimizationId: string): string {
    return join(this.root, optimizationId);
  }

  imagePath(optimizationId: string, sampleId: number): string {
    return join(this.runDir(optimizationId), `${sampleId}.jpg`);
  }

  insertRun(run: RunRow): void {
    this.db
      .prepare(
        `INSERT INTO optimization_runs (optimization_id, task_id, app_ids, duration_s, max_samples, status,
           end_reason, stats, frames, dropped, sample_limit, created_at, ends_at, finished_at)
         VALUES (@optimization_id, @task_id, @app_ids, @duration_s, @max_samples, @status, @end_reason, @stats,
           @frames, @dropped, @sample_limit, @created_at, @ends_at, @finished_at)`,
      )
      .run({ ...run, app_ids: JSON.stringify(run.app_ids), stats: JSON.stringify(run.stats) });
  }

  run(taskId: string, optimizationId: string): RunRow {
    const row = this.db
      .prepare('SELECT * FROM optimization_runs WHERE optimization_id = ? AND task_id = ?')
      .get(optimizationId, taskId) as StoredRun | undefined;
    if (!row)
      throw new DomainError<OptimizationErrorKind>(
        'optimization.not_found',
        `task ${taskId} has no optimization "${optimizationId}"`,
      );
    return toRun(row);
  }

  runsOf(taskId: string): RunRow[] {
    return (
      this.db
        .prepare('SELECT * FROM optimization_runs WHERE task_id = ? ORDER BY created_at, optimization_id')
        .all(taskId) as StoredRun[]
    ).map(toRun);
  }

  saveProgress(run: Pick<RunRow, 'optimization_id' | 'stats' | 'frames' | 'dropped' | 'sample_limit'>): void {
    this.db
      .prepare(
        'UPDATE optimization_runs SET stats = ?, frames = ?, dropped = ?, sample_limit = ? WHERE optimization_id = ?',
      )
      .run(JSON.stringify(run.stats), run.frames, run.dropped, run.sample_limit, run.optimization_id);
  }

  finish(optimizationId: string, status: RunStatus, endReason: EndReason, at: number): void {
    this.db
      .prepare(
        "UPDATE optimization_runs SET status = ?, end_reason = ?, finished_at = ? WHERE optimization_id = ? AND status = 'running'",
      )
      .run(status, endReason, at, optimizationId);
  }

  /** At engine start: no run collects any more, whether the engine stopped or crashed. */
  interruptRunning(at: number): void {
    this.db
      .prepare(
        "UPDATE optimization_runs SET status = 'interrupted', end_reason = 'engine_restart', finished_at = ? WHERE status = 'running'",
      )
      .run(at);
  }

  insertSample(optimizationId: string, sample: SampleRow): void {
    this.db
      .prepare(
        `INSERT INTO optimization_samples (optimization_id, sample_id, app_id, frame_id, timestamp, width, height,
           reasons, annotations, bytes, verdict, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        optimizationId,
        sample.sample_id,
        sample.app_id,
        sample.frame_id,
        sample.timestamp,
        sample.width,
        sample.height,
        sample.reasons.join(','),
        JSON.stringify(sample.annotations),
        sample.bytes,
        sample.verdict,
        sample.created_at,
      );
  }

  tally(optimizationId: string): SampleTally {
    return this.db
      .prepare(
        `SELECT COUNT(*) AS count, COALESCE(SUM(bytes), 0) AS bytes,
           COALESCE(SUM(instr(reasons, 'near_threshold') > 0), 0) AS near_threshold,
           COALESCE(SUM(instr(reasons, 'flicker') > 0), 0) AS flicker,
           COALESCE(SUM(instr(reasons, 'counter_toggle') > 0), 0) AS counter_toggle,
           COALESCE(SUM(verdict = 'right'), 0) AS right,
           COALESCE(SUM(verdict = 'wrong'), 0) AS wrong,
           COALESCE(SUM(verdict = 'none'), 0) AS none
         FROM optimization_samples WHERE optimization_id = ?`,
      )
      .get(optimizationId) as SampleTally;
  }

  samples(
    optimizationId: string,
    query: { afterId: number; limit: number; verdict?: Verdict; appId?: string },
  ): SampleRow[] {
    const filters = ['optimization_id = @id', 'sample_id > @afterId'];
    const params: Record<string, string | number> = {
      id: optimizationId,
      afterId: query.afterId,
      limit: query.limit,
    };
    if (query.verdict) {
      filters.push('verdict = @verdict');
      params.verdict = query.verdict;
    }
    if (query.appId) {
      filters.push('app_id = @appId');
      params.appId = query.appId;
    }
    return (
      this.db
        .prepare(
          `SELECT * FROM optimization_samples WHERE ${filters.join(' AND ')} ORDER BY sample_id LIMIT @limit`,
        )
        .all(params) as StoredSample[]
    ).map(toSample);
  }

  /** Every sample of the run in id order (the export). */
  allSamples(optimizationId: string): SampleRow[] {
    return (
      this.db
        .prepare('SELECT * FROM optimization_samples WHERE optimization_id = ? ORDER BY sample_id')
        .all(optimizationId) as StoredSample[]
    ).map(toSample);
  }

  judgedSamples(optimizationId: string): SampleRow[] {
    return (
      this.db
        .prepare("SELECT * FROM optimization_samples WHERE optimization_id = ? AND verdict != 'none'")
        .all(optimizationId) as StoredSample[]
    ).map(toSample);
  }

  sample(optimizationId: string, sampleId: number): SampleRow {
    const row = this.db
      .prepare('SELECT * FROM optimization_samples WHERE optimization_id = ? AND sample_id = ?')
      .get(optimizationId, sampleId) as StoredSample | undefined;
    if (!row)
      throw new DomainError<OptimizationErrorKind>(
        'optimization.sample_not_found',
        `optimization ${optimizationId} has no sample ${sampleId}`,
      );
    return toSample(row);
  }

  setVerdict(optimizationId: string, sampleId: number, verdict: Verdict): void {
    this.db
      .prepare('UPDATE optimization_samples SET verdict = ? WHERE optimization_id = ? AND sample_id = ?')
      .run(verdict, optimizationId, sampleId);
  }

  /**
   * Removes folders of runs that are gone (their task left the listing) and, with files too, images
   * a crash left without a row.
   */
  sweep(files: boolean): void {
    let dirs: string[];
    try {
      dirs = readdirSync(this.root);
    } catch {
      return;
    }
    const exists = this.db.prepare('SELECT 1 FROM optimization_runs WHERE optimization_id = ?');
    const stored = this.db.prepare(
      'SELECT 1 FROM optimization_samples WHERE optimization_id = ? AND sample_id = ?',
    );
    for (const dir of dirs) {
      const path = join(this.root, dir);
      if (!exists.get(dir)) {
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      if (!files) continue;
      for (const name of readdirSync(path)) {
        const id = /^(\d+)\.jpg$/.exec(name)?.[1];
        if (!id || !stored.get(dir, Number(id))) rmSync(join(path, name), { force: true });
      }
    }
  }
}
