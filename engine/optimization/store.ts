import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '../domain-error';
import type { Judged } from './judgement';
import type { OptimizationErrorKind } from './optimization-error';
import type { OptimizationRepository, RunRow, SampleRow, SampleTally } from './optimization-repository';
import type { EndReason, RunStatus, Verdict } from './schema';

/**
 * Optimization runs and their samples: rows in SQLite (migration 4, OptimizationRepository), each sample's source frame a
 * JPEG under <data-dir>/optimization/<optimization_id>/. An image is written before its row, so a
 * row always has its file; files a crash left without a row are swept at start. Runs go with their
 * task (foreign key), when the task leaves the listing.
 */
export class OptimizationStore {
  readonly root: string;

  constructor(
    private readonly rows: OptimizationRepository,
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
    this.rows.insertRun(run);
  }

  run(taskId: string, optimizationId: string): RunRow {
    const row = this.rows.run(taskId, optimizationId);
    if (!row)
      throw new DomainError<OptimizationErrorKind>(
        'optimization.not_found',
        `task ${taskId} has no optimization "${optimizationId}"`,
      );
    return row;
  }

  runsOf(taskId: string): RunRow[] {
    return this.rows.runsOf(taskId);
  }

  saveProgress(run: Pick<RunRow, 'optimization_id' | 'stats' | 'frames' | 'dropped' | 'sample_limit'>): void {
    this.rows.saveProgress(run);
  }

  finish(optimizationId: string, status: RunStatus, endReason: EndReason, at: number): void {
    this.rows.finish(optimizationId, status, endReason, at);
  }

  /** At engine start: no run collects any more, whether the engine stopped or crashed. */
  interruptRunning(at: number): void {
    this.rows.interruptRunning(at);
  }

  insertSample(optimizationId: string, sample: SampleRow): void {
    this.rows.insertSample(optimizationId, sample);
  }

  tally(optimizationId: string): SampleTally {
    return this.rows.tally(optimizationId);
  }

  samples(
    optimizationId: string,
    query: { afterId: number; limit: number; verdict?: Verdict; appId?: string },
  ): SampleRow[] {
    return this.rows.samples(optimizationId, query);
  }

  /** Every sample of the run in id order (the export). */
  allSamples(optimizationId: string): SampleRow[] {
    return this.rows.allSamples(optimizationId);
  }

  judgedSamples(optimizationId: string): SampleRow[] {
    return this.rows.judgedSamples(optimizationId);
  }

  sample(optimizationId: string, sampleId: number): SampleRow {
    const row = this.rows.sample(optimizationId, sampleId);
    if (!row)
      throw new DomainError<OptimizationErrorKind>(
        'optimization.sample_not_found',
        `optimization ${optimizationId} has no sample ${sampleId}`,
      );
    return row;
  }

  setJudgement(optimizationId: string, sampleId: number, judged: Judged): void {
    this.rows.setJudgement(optimizationId, sampleId, judged);
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
    for (const dir of dirs) {
      const path = join(this.root, dir);
      if (!this.rows.runExists(dir)) {
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      if (!files) continue;
      for (const name of readdirSync(path)) {
        const id = /^(\d+)\.jpg$/.exec(name)?.[1];
        if (!id || !this.rows.sample(dir, Number(id))) rmSync(join(path, name), { force: true });
      }
    }
  }
}
