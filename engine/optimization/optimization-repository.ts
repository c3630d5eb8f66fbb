import type { Db } from '../store/db';
import type { Judged } from './judgement';
import type { Annotation, EndReason, MissedObject, RunStatus, SampleReason, Verdict } from './schema';
import type { RunStats } from './stats';

/**
 * The `optimization_runs` table with its child `optimization_samples` (ON DELETE CASCADE): rows in
 * and out typed, their JSON and list columns parsed here.
 */
export class OptimizationRepository {
  private readonly sql;

  constructor(db: Db) {
    this.sql = {
      insertRun: db.prepare<StoredRun>(
        `INSERT INTO optimization_runs (optimization_id, task_id, app_ids, duration_s, max_samples, status,
           end_reason, stats, frames, dropped, sample_limit, created_at, ends_at, finished_at)
         VALUES (@optimization_id, @task_id, @app_ids, @duration_s, @max_samples, @status, @end_reason, @stats,
           @frames, @dropped, @sample_limit, @created_at, @ends_at, @finished_at)`,
      ),
      run: db.prepare<[string, string], StoredRun>(
        'SELECT * FROM optimization_runs WHERE optimization_id = ? AND task_id = ?',
      ),
      runExists: db.prepare<[string], { found: 1 }>(
        'SELECT 1 AS found FROM optimization_runs WHERE optimization_id = ?',
      ),
      runsOf: db.prepare<[string], StoredRun>(
        'SELECT * FROM optimization_runs WHERE task_id = ? ORDER BY created_at, optimization_id',
      ),
      saveProgress: db.prepare<[string, number, number, string | null, string]>(
        'UPDATE optimization_runs SET stats = ?, frames = ?, dropped = ?, sample_limit = ? WHERE optimization_id = ?',
      ),
      finish: db.prepare<[RunStatus, EndReason, number, string]>(
        "UPDATE optimization_runs SET status = ?, end_reason = ?, finished_at = ? WHERE optimization_id = ? AND status = 'running'",
      ),
      interruptRunning: db.prepare<[number]>(
        "UPDATE optimization_runs SET status = 'interrupted', end_reason = 'engine_restart', finished_at = ? WHERE status = 'running'",
      ),
      insertSample: db.prepare<StoredSample & { optimization_id: string }>(
        `INSERT INTO optimization_samples (optimization_id, sample_id, app_id, frame_id, timestamp, width, height,
           reasons, annotations, missed, bytes, verdict, created_at)
         VALUES (@optimization_id, @sample_id, @app_id, @frame_id, @timestamp, @width, @height, @reasons,
           @annotations, @missed, @bytes, @verdict, @created_at)`,
      ),
      tally: db.prepare<[string], SampleTally>(
        `SELECT COUNT(*) AS count, COALESCE(SUM(bytes), 0) AS bytes,
           COALESCE(SUM(instr(reasons, 'near_threshold') > 0), 0) AS near_threshold,
           COALESCE(SUM(instr(reasons, 'flicker') > 0), 0) AS flicker,
           COALESCE(SUM(instr(reasons, 'counter_toggle') > 0), 0) AS counter_toggle,
           COALESCE(SUM(verdict = 'right'), 0) AS right,
           COALESCE(SUM(verdict = 'wrong'), 0) AS wrong,
           COALESCE(SUM(verdict = 'none'), 0) AS none
         FROM optimization_samples WHERE optimization_id = ?`,
      ),
      samples: db.prepare<SampleFilter, StoredSample>(
        `SELECT * FROM optimization_samples WHERE optimization_id = @id AND sample_id > @afterId
           AND (@verdict IS NULL OR verdict = @verdict) AND (@appId IS NULL OR app_id = @appId)
         ORDER BY sample_id LIMIT @limit`,
      ),
      allSamples: db.prepare<[string], StoredSample>(
        'SELECT * FROM optimization_samples WHERE optimization_id = ? ORDER BY sample_id',
      ),
      judgedSamples: db.prepare<[string], StoredSample>(
        "SELECT * FROM optimization_samples WHERE optimization_id = ? AND verdict != 'none'",
      ),
      sample: db.prepare<[string, number], StoredSample>(
        'SELECT * FROM optimization_samples WHERE optimization_id = ? AND sample_id = ?',
      ),
      setJudgement: db.prepare<[string, string, Verdict, string, number]>(
        'UPDATE optimization_samples SET annotations = ?, missed = ?, verdict = ? WHERE optimization_id = ? AND sample_id = ?',
      ),
    };
  }

  insertRun(run: RunRow): void {
    this.sql.insertRun.run({
      ...run,
      app_ids: JSON.stringify(run.app_ids),
      stats: JSON.stringify(run.stats),
    });
  }

  /** The task's run; undefined when the task has no such run. */
  run(taskId: string, optimizationId: string): RunRow | undefined {
    const row = this.sql.run.get(optimizationId, taskId);
    return row && toRun(row);
  }

  runExists(optimizationId: string): boolean {
    return this.sql.runExists.get(optimizationId) !== undefined;
  }

  runsOf(taskId: string): RunRow[] {
    return this.sql.runsOf.all(taskId).map(toRun);
  }

  saveProgress(run: Pick<RunRow, 'optimization_id' | 'stats' | 'frames' | 'dropped' | 'sample_limit'>): void {
    this.sql.saveProgress.run(
      JSON.stringify(run.stats),
      run.frames,
      run.dropped,
      run.sample_limit,
      run.optimization_id,
    );
  }

  /** Ends a running run; one already ended stays as it is. */
  finish(optimizationId: string, status: RunStatus, endReason: EndReason, at: number): void {
    this.sql.finish.run(status, endReason, at, optimizationId);
  }

  interruptRunning(at: number): void {
    this.sql.interruptRunning.run(at);
  }

  insertSample(optimizationId: string, sample: SampleRow): void {
    this.sql.insertSample.run({
      ...sample,
      optimization_id: optimizationId,
      reasons: sample.reasons.join(','),
      annotations: JSON.stringify(sample.annotations),
      missed: JSON.stringify(sample.missed),
    });
  }

  tally(optimizationId: string): SampleTally {
    return this.sql.tally.get(optimizationId) as SampleTally;
  }

  samples(
    optimizationId: string,
    query: { afterId: number; limit: number; verdict?: Verdict; appId?: string },
  ): SampleRow[] {
    return this.sql.samples
      .all({
        id: optimizationId,
        afterId: query.afterId,
        limit: query.limit,
        verdict: query.verdict ?? null,
        appId: query.appId ?? null,
      })
      .map(toSample);
  }

  allSamples(optimizationId: string): SampleRow[] {
    return this.sql.allSamples.all(optimizationId).map(toSample);
  }

  judgedSamples(optimizationId: string): SampleRow[] {
    return this.sql.judgedSamples.all(optimizationId).map(toSample);
  }

  /** The run's sample; undefined when it has no such sample. */
  sample(optimizationId: string, sampleId: number): SampleRow | undefined {
    const row = this.sql.sample.get(optimizationId, sampleId);
    return row && toSample(row);
  }

  setJudgement(optimizationId: string, sampleId: number, judged: Judged): void {
    this.sql.setJudgement.run(
      JSON.stringify(judged.annotations),
      JSON.stringify(judged.missed),
      judged.verdict,
      optimizationId,
      sampleId,
    );
  }
}

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
  missed: MissedObject[];
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

interface SampleFilter {
  id: string;
  afterId: number;
  limit: number;
  verdict: Verdict | null;
  appId: string | null;
}

type StoredRun = Omit<RunRow, 'app_ids' | 'stats'> & { app_ids: string; stats: string };
type StoredSample = Omit<SampleRow, 'reasons' | 'annotations' | 'missed'> & {
  reasons: string;
  annotations: string;
  missed: string;
};

const toRun = (row: StoredRun): RunRow => ({
  ...row,
  app_ids: JSON.parse(row.app_ids) as string[],
  stats: JSON.parse(row.stats) as RunStats,
});

const toSample = (row: StoredSample): SampleRow => ({
  ...row,
  reasons: row.reasons.split(',') as SampleReason[],
  // Samples judged before detections had verdicts of their own: the sample's verdict was its hard ones'.
  annotations: (JSON.parse(row.annotations) as Array<Omit<Annotation, 'verdict'> & Partial<Annotation>>).map(
    (a) => ({ ...a, verdict: a.verdict ?? (a.hard ? row.verdict : 'none') }),
  ),
  missed: JSON.parse(row.missed) as MissedObject[],
});
