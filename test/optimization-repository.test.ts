import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  OptimizationRepository,
  type RunRow,
  type SampleRow,
} from '../engine/optimization/optimization-repository';
import type { RunStats } from '../engine/optimization/stats';
import { type Db, openDb } from '../engine/store/db';

let dir: string;
let db: Db;
let repo: OptimizationRepository;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-optimization-repo-'));
  db = openDb(dir);
  repo = new OptimizationRepository(db);
  // Runs belong to a task (foreign key); the test stores one directly.
  db.prepare(
    `INSERT INTO tasks (task_id, mode, zapk_id, app_ids, device_id, business_id, video_url, report_url, osd,
       app_configs, status, close_code, dump, created_at, updated_at)
     VALUES ('t', 'video', 'z', '[]', '', '', '', '', '{}', '[]', 'running', 0, '', 0, 0)`,
  ).run();
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (id: string, createdAt: number): RunRow => ({
  optimization_id: id,
  task_id: 't',
  app_ids: ['a', 'b'],
  duration_s: 60,
  max_samples: 100,
  status: 'running',
  end_reason: '',
  stats: {} as RunStats,
  frames: 0,
  dropped: 0,
  sample_limit: null,
  created_at: createdAt,
  ends_at: createdAt + 60_000,
  finished_at: null,
});

const sample = (id: number, appId: string, verdict: SampleRow['verdict'] = 'none'): SampleRow => ({
  sample_id: id,
  app_id: appId,
  frame_id: id * 10,
  timestamp: id,
  width: 640,
  height: 480,
  reasons: ['near_threshold', 'flicker'],
  annotations: [],
  missed: [],
  bytes: 1000,
  verdict,
  created_at: id,
});

describe('OptimizationRepository', () => {
  it('stores runs with their JSON columns, ends only running ones and interrupts the rest', () => {
    repo.insertRun(run('r2', 2));
    repo.insertRun(run('r1', 1));
    expect(repo.run('t', 'r1')).toEqual(run('r1', 1));
    expect([repo.run('other', 'r1'), repo.runExists('r1'), repo.runExists('nope')]).toEqual([
      undefined,
      true,
      false,
    ]);
    expect(repo.runsOf('t').map((row) => row.optimization_id)).toEqual(['r1', 'r2']);
    repo.finish('r1', 'finished', 'duration', 50);
    repo.finish('r1', 'interrupted', 'task_closed', 60);
    repo.interruptRunning(70);
    expect(repo.runsOf('t').map((row) => [row.status, row.end_reason, row.finished_at])).toEqual([
      ['finished', 'duration', 50],
      ['interrupted', 'engine_restart', 70],
    ]);
    repo.saveProgress({
      optimization_id: 'r2',
      stats: { x: 1 } as unknown as RunStats,
      frames: 9,
      dropped: 1,
      sample_limit: 'disk',
    });
    expect(repo.run('t', 'r2')).toMatchObject({
      stats: { x: 1 },
      frames: 9,
      dropped: 1,
      sample_limit: 'disk',
    });
  });

  it('filters samples by verdict and app, pages them, and tallies them', () => {
    repo.insertRun(run('r', 1));
    repo.insertSample('r', sample(1, 'a'));
    repo.insertSample('r', sample(2, 'b', 'right'));
    repo.insertSample('r', sample(3, 'a', 'wrong'));
    const ids = (rows: SampleRow[]) => rows.map((row) => row.sample_id);
    // SELECT * also brings the run's id, as the rows always did.
    expect(repo.sample('r', 2)).toEqual({ ...sample(2, 'b', 'right'), optimization_id: 'r' });
    expect(ids(repo.samples('r', { afterId: 0, limit: 10 }))).toEqual([1, 2, 3]);
    expect(ids(repo.samples('r', { afterId: 1, limit: 1 }))).toEqual([2]);
    expect(ids(repo.samples('r', { afterId: 0, limit: 10, appId: 'a' }))).toEqual([1, 3]);
    expect(ids(repo.samples('r', { afterId: 0, limit: 10, verdict: 'wrong', appId: 'a' }))).toEqual([3]);
    expect(ids(repo.judgedSamples('r')).sort()).toEqual([2, 3]);
    repo.setJudgement('r', 1, { annotations: [], missed: [], verdict: 'right' });
    expect(repo.tally('r')).toEqual({
      count: 3,
      bytes: 3000,
      near_threshold: 3,
      flicker: 3,
      counter_toggle: 0,
      right: 2,
      wrong: 1,
      none: 0,
    });
    expect(ids(repo.allSamples('r'))).toEqual([1, 2, 3]);

    // A sample judged before detections had verdicts of their own: its verdict was its hard ones'.
    const legacy = { class_id: '0', label: 'person', score: 0.6, bbox: [1, 2, 3, 4], track_id: null };
    repo.insertSample('r', {
      ...sample(4, 'a', 'wrong'),
      annotations: [
        { ...legacy, hard: true },
        { ...legacy, hard: false },
      ] as SampleRow['annotations'],
    });
    expect(repo.sample('r', 4)?.annotations.map((a) => a.verdict)).toEqual(['wrong', 'none']);
  });
});
