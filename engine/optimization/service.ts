import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import sharp from 'sharp';
import type { Clock, TimerHandle } from '../clock';
import { DomainError } from '../domain-error';
import type { InstalledApp } from '../packages/registry';
import type { AnalysedFrame } from '../pipeline/task-pipeline';
import { layRule } from '../rules/override';
import { SpaceWaiter } from '../store/disk-full';
import type { TaskEvents } from '../tasks/registry';
import type { TaskMode, TaskView } from '../tasks/schema';
import { Collector } from './collector';
import { datasetZip } from './dataset';
import { judge } from './judgement';
import { OPTIMIZATION_LIMITS } from './limits';
import type { OptimizationErrorKind } from './optimization-error';
import type { OptimizationRepository, RunRow, SampleRow } from './optimization-repository';
import { proposeThreshold } from './proposal';
import { SampleWriter } from './sample-writer';
import type {
  EndReason,
  OptimizationView,
  Proposal,
  SampleJudgement,
  SamplePage,
  SampleView,
  Verdict,
} from './schema';
import type { RunStats } from './stats';
import { OptimizationStore } from './store';

export interface OptimizationDeps {
  repository: OptimizationRepository;
  clock: Clock;
  dataDir: string;
  tasks: EventEmitter<TaskEvents> & {
    get(taskId: string): TaskView;
    liveTask(taskId: string, mode: TaskMode): TaskView;
  };
  packages: { readonly revision: number; app(zapkId: string, appId: string): InstalledApp };
  /** Every analysed frame of a running video task, until the returned function is called. */
  video: { watch(taskId: string, listener: (frame: AnalysedFrame) => void): () => void };
  onError(error: unknown): void;
}

export interface StartRequest {
  app_ids: string[];
  duration: number;
  max_samples?: number;
}

interface ActiveRun {
  row: RunRow;
  collector: Collector;
  writer: SampleWriter;
  unwatch: () => void;
  timer: TimerHandle;
  ending?: Promise<void>;
}

const SWEEP_EVERY_MS = 60 * 60_000;

/**
 * Effect optimization (4.13): runs that collect hard samples from a task's analysis for a while,
 * their samples and verdicts, threshold proposals, and the dataset export. A run only listens while
 * it collects; a task without one costs nothing.
 */
export class Optimizations {
  private readonly store: OptimizationStore;
  private readonly active = new Map<string, ActiveRun>();
  private sweepTimer?: TimerHandle;
  /** Progress and ends of runs that a full disk held back. */
  private readonly writes: SpaceWaiter;

  constructor(private readonly deps: OptimizationDeps) {
    this.store = new OptimizationStore(deps.repository, deps.dataDir);
    this.writes = new SpaceWaiter(deps.clock, deps.onError);
  }

  /** At engine start: runs the engine left behind are interrupted; runs end when their task closes. */
  open(): void {
    const now = this.deps.clock.now();
    this.writes.write('interrupt', () => this.store.interruptRunning(now));
    this.store.sweep(true);
    this.deps.tasks.on('closed', (task) => {
      for (const run of this.active.values()) {
        if (run.row.task_id === task.task_id) void this.end(run, 'task_closed');
      }
    });
    this.scheduleSweep();
  }

  /** Stores what the runs collected so far; they show as interrupted after the next start. */
  async close(): Promise<void> {
    if (this.sweepTimer) this.deps.clock.clearTimeout(this.sweepTimer);
    await Promise.all([...this.active.values()].map((run) => this.end(run, null)));
    this.writes.close();
  }

  start(taskId: string, request: StartRequest): string {
    const task = this.deps.tasks.liveTask(taskId, 'video');
    for (const run of this.active.values()) {
      if (run.row.task_id !== taskId) continue;
      const busy = request.app_ids.find((appId) => run.row.app_ids.includes(appId));
      if (busy) {
        throw new DomainError<OptimizationErrorKind>(
          'optimization.running',
          `application "${busy}" of task ${taskId} is already in optimization ${run.row.optimization_id}, running until ${new Date(run.row.ends_at).toISOString()}`,
          { field: 'app_ids' },
        );
      }
    }
    const now = this.deps.clock.now();
    const packages = this.deps.packages;
    const row: RunRow = {
      optimization_id: randomUUID(),
      task_id: taskId,
      app_ids: request.app_ids,
      duration_s: request.duration,
      max_samples: request.max_samples ?? OPTIMIZATION_LIMITS.defaultMaxSamples,
      status: 'running',
      end_reason: '',
      stats: {},
      frames: 0,
      dropped: 0,
      sample_limit: null,
      created_at: now,
      ends_at: now + request.duration * 1000,
      finished_at: null,
    };
    this.store.insertRun(row);
    const writer = new SampleWriter({
      store: this.store,
      clock: this.deps.clock,
      optimizationId: row.optimization_id,
      maxSamples: row.max_samples,
      onError: this.deps.onError,
    });
    const collector = new Collector({
      zapkId: task.zapk_id,
      appIds: row.app_ids,
      // Samples are hard by the rule in force on this camera: the app's under the camera's override.
      packages: {
        get revision() {
          return packages.revision;
        },
        app: (zapkId, appId) => this.cameraApp(this.deps.tasks.get(taskId), packages.app(zapkId, appId)),
      },
      offer: (candidate) => writer.offer(candidate),
    });
    const run: ActiveRun = {
      row,
      collector,
      writer,
      unwatch: () => {},
      timer: this.deps.clock.setTimeout(() => void this.end(run, 'duration'), request.duration * 1000),
    };
    run.unwatch = this.deps.video.watch(taskId, (frame) => this.onFrame(run, frame));
    this.active.set(row.optimization_id, run);
    return row.optimization_id;
  }

  view(taskId: string, optimizationId: string): OptimizationView {
    const task = this.deps.tasks.get(taskId);
    return this.viewOf(task, this.store.run(taskId, optimizationId));
  }

  list(taskId: string): OptimizationView[] {
    const task = this.deps.tasks.get(taskId);
    return this.store.runsOf(taskId).map((row) => this.viewOf(task, row));
  }

  samples(
    taskId: string,
    optimizationId: string,
    query: { after_id?: number; limit?: number; verdict?: Verdict; app_id?: string },
  ): SamplePage {
    this.deps.tasks.get(taskId);
    this.store.run(taskId, optimizationId);
    const limit = query.limit ?? 100;
    const rows = this.store.samples(optimizationId, {
      afterId: query.after_id ?? 0,
      limit,
      verdict: query.verdict,
      appId: query.app_id,
    });
    const items = rows.map((row) => sampleView(taskId, optimizationId, row));
    const last = rows[rows.length - 1];
    return { items, next_after_id: rows.length === limit && last ? last.sample_id : null };
  }

  /** The operator's judgement of a sample's detections and of what the model missed on it. */
  judge(taskId: string, optimizationId: string, sampleId: number, judgement: SampleJudgement): SampleView {
    const task = this.deps.tasks.get(taskId);
    this.store.run(taskId, optimizationId);
    const sample = this.store.sample(optimizationId, sampleId);
    const labels = this.appOf(task, sample.app_id)?.labels ?? [];
    this.store.setJudgement(optimizationId, sampleId, judge(sample, judgement, labels));
    return sampleView(taskId, optimizationId, this.store.sample(optimizationId, sampleId));
  }

  /** The sample's source frame as stored (JPEG), or 320 px wide for a grid of thumbnails. */
  async image(taskId: string, optimizationId: string, sampleId: number, thumb: boolean): Promise<Buffer> {
    this.deps.tasks.get(taskId);
    this.store.run(taskId, optimizationId);
    this.store.sample(optimizationId, sampleId);
    const jpeg = await readFile(this.store.imagePath(optimizationId, sampleId));
    if (!thumb) return jpeg;
    return sharp(jpeg)
      .resize({ width: OPTIMIZATION_LIMITS.thumbWidth, withoutEnlargement: true })
      .jpeg({ quality: 80 })
      .toBuffer();
  }

  /** The dataset of the samples stored so far, as a zip stream. */
  export(taskId: string, optimizationId: string): Readable {
    const task = this.deps.tasks.get(taskId);
    const row = this.store.run(taskId, optimizationId);
    return datasetZip(
      row,
      this.store.allSamples(optimizationId),
      (sampleId) => this.store.imagePath(optimizationId, sampleId),
      (appId) => this.appOf(task, appId)?.labels ?? [],
    );
  }

  private onFrame(run: ActiveRun, frame: AnalysedFrame): void {
    try {
      run.collector.onFrame(frame);
      // Saved between frames, so that the analysis never waits for the database.
      if (run.collector.frames % OPTIMIZATION_LIMITS.statsEveryFrames === 0) {
        setImmediate(() => {
          if (!run.ending) this.saveProgress(run, run.collector.snapshot());
        });
      }
    } catch (error) {
      this.deps.onError(error);
    }
  }

  private saveProgress(run: ActiveRun, stats: RunStats): void {
    const progress = {
      optimization_id: run.row.optimization_id,
      stats,
      frames: run.collector.frames,
      dropped: run.writer.dropped,
      sample_limit: run.writer.limit,
    };
    this.writes.write(`progress:${progress.optimization_id}`, () => this.store.saveProgress(progress));
  }

  /** Stops collecting; once every sample is stored, saves the statistics and (unless the engine stops) the end. */
  private end(run: ActiveRun, reason: EndReason | null): Promise<void> {
    if (run.ending) return run.ending;
    run.unwatch();
    this.deps.clock.clearTimeout(run.timer);
    const stats = run.collector.finish();
    run.ending = run.writer
      .drain()
      .then(() => {
        this.saveProgress(run, stats);
        const id = run.row.optimization_id;
        const at = this.deps.clock.now();
        if (reason) this.writes.write(`finish:${id}`, () => this.store.finish(id, 'finished', reason, at));
      })
      .catch((error: unknown) => this.deps.onError(error))
      .finally(() => this.active.delete(run.row.optimization_id));
    return run.ending;
  }

  private viewOf(task: TaskView, row: RunRow): OptimizationView {
    const run = this.active.get(row.optimization_id);
    const stats = run ? run.collector.snapshot() : row.stats;
    const tally = this.store.tally(row.optimization_id);
    return {
      optimization_id: row.optimization_id,
      task_id: row.task_id,
      app_ids: row.app_ids,
      status: row.status,
      end_reason: row.end_reason,
      duration: row.duration_s,
      max_samples: row.max_samples,
      created_at: row.created_at,
      ends_at: row.ends_at,
      finished_at: row.finished_at,
      frames_analysed: run ? run.collector.frames : row.frames,
      sample_count: tally.count,
      samples_by_reason: {
        near_threshold: tally.near_threshold,
        flicker: tally.flicker,
        counter_toggle: tally.counter_toggle,
      },
      verdicts: { right: tally.right, wrong: tally.wrong, none: tally.none },
      samples_dropped: run ? run.writer.dropped : row.dropped,
      sample_limit: run ? run.writer.limit : row.sample_limit,
      image_bytes: tally.bytes,
      proposals: this.proposals(task, row, stats),
    };
  }

  /**
   * One proposal per class entry of each app's rule as it is now on this camera. A threshold is
   * proposed only from samples the operator judged (issue 34): the track statistics alone never
   * change a rule. Each offers two requests: the camera's override, or the app's rule (every camera).
   */
  private proposals(task: TaskView, row: RunRow, stats: RunStats): Proposal[] {
    const judged = this.store.judgedSamples(row.optimization_id);
    const proposals: Proposal[] = [];
    for (const appId of row.app_ids) {
      const app = this.appOf(task, appId);
      const classes = app?.rule.classes ?? [];
      const override = task.rule_overrides[appId] ?? {};
      const onCamera = new Map(
        (app ? (this.cameraApp(task, app).rule.classes ?? []) : []).map((c) => [c.class_id, c]),
      );
      for (const entry of classes) {
        const ofApp = judged.filter((sample) => sample.app_id === appId);
        const verdicts = ofApp.flatMap((sample) =>
          sample.annotations.flatMap((a) =>
            a.class_id === entry.class_id && a.verdict !== 'none'
              ? [{ score: a.score, verdict: a.verdict }]
              : [],
          ),
        );
        const missed = ofApp.reduce(
          (sum, sample) => sum + sample.missed.filter((m) => m.class_id === entry.class_id).length,
          0,
        );
        const current = onCamera.get(entry.class_id)?.threshold ?? entry.threshold;
        const proposal = proposeThreshold(current, stats[appId]?.[entry.class_id], verdicts, missed);
        const judgedCount = verdicts.length + missed;
        const proposed = judgedCount === 0 ? null : proposal.proposed;
        const classOverrides = (override.classes ?? []).filter((c) => c.class_id !== entry.class_id);
        const own = override.classes?.find((c) => c.class_id === entry.class_id);
        proposals.push({
          app_id: appId,
          class_id: entry.class_id,
          name: entry.name,
          current_threshold: current,
          app_threshold: entry.threshold,
          proposed_threshold: proposed,
          judged: judgedCount,
          basis: proposal.basis,
          // Unjudged, the statistics' best threshold is not shown as a proposal in any figure either.
          f1: proposed === null ? { ...proposal.f1, proposed: null } : proposal.f1,
          alarms:
            proposed === null
              ? { current: proposal.alarms.current, proposed: proposal.alarms.current, change: 0 }
              : proposal.alarms,
          apply:
            proposed === null
              ? null
              : {
                  method: 'PUT',
                  path: `/api/zapk/${encodeURIComponent(task.zapk_id)}/app/${encodeURIComponent(appId)}`,
                  body: {
                    rule: {
                      classes: classes.map((c) =>
                        c.class_id === entry.class_id ? { ...c, threshold: proposed } : c,
                      ),
                    },
                  },
                },
          apply_camera:
            proposed === null
              ? null
              : {
                  method: 'PUT',
                  path: `/api/task/${encodeURIComponent(task.task_id)}`,
                  body: {
                    rule_overrides: {
                      [appId]: {
                        ...override,
                        classes: [
                          ...classOverrides,
                          { ...own, class_id: entry.class_id, threshold: proposed },
                        ],
                      },
                    },
                  },
                },
        });
      }
    }
    return proposals;
  }

  /** The app as it runs on the task's camera: its rule under the camera's override. */
  private cameraApp(task: TaskView, app: InstalledApp): InstalledApp {
    return { ...app, rule: layRule(app.rule, task.rule_overrides[app.app_id]) };
  }

  private appOf(task: TaskView, appId: string): InstalledApp | undefined {
    try {
      return this.deps.packages.app(task.zapk_id, appId);
    } catch {
      // The package went after the task closed: its runs still list, without proposals.
      return undefined;
    }
  }

  private scheduleSweep(): void {
    this.sweepTimer = this.deps.clock.setTimeout(() => {
      try {
        this.store.sweep(false);
      } catch (error) {
        this.deps.onError(error);
      }
      this.scheduleSweep();
    }, SWEEP_EVERY_MS);
  }
}

function sampleView(taskId: string, optimizationId: string, row: SampleRow): SampleView {
  const image = `/api/task/${taskId}/optimization/${optimizationId}/samples/${row.sample_id}/image`;
  return {
    sample_id: row.sample_id,
    app_id: row.app_id,
    frame_id: row.frame_id,
    timestamp: row.timestamp,
    width: row.width,
    height: row.height,
    reasons: row.reasons,
    annotations: row.annotations,
    missed: row.missed,
    verdict: row.verdict,
    image_url: image,
    thumb_url: `${image}?thumb=true`,
    created_at: row.created_at,
  };
}
