// Over 400 lines on purpose: the lifecycle of a task (start, update, close, resume, its timers, lost and restored streams) in one place; checks, rows, views and SQL are in their own modules.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Clock, TimerHandle } from '../clock';
import type { AnalysisHealth } from '../contract/health';
import { ReconnectBackoff, reconnectPolicyOf } from '../media/reconnect-policy';
import { sourceRefusal } from '../media/source-refusal';
import { parseSourceUrl, type SourceUrl } from '../media/source-url';
import { scaleAreas } from '../pipeline/app-runtime';
import type { PipelineTask } from '../pipeline/task-pipeline';
import { DISK_RETRY_MS, isDiskFull, SpaceWaiter, writeUnlessFull } from '../store/disk-full';
import type { FrameSize } from '../vision/types';
import { renderDump, restingHealth } from './health-view';
import { DEFAULT_ANALYSIS_FPS, TASK_LIMITS } from './limits';
import type { PackageUse } from './package-use';
import {
  type AppConfig,
  CLOSE_CODE,
  type CloseCode,
  DEFAULT_OSD,
  type Osd,
  type StartTaskBody,
  type TaskMode,
  type TaskStatus,
  type TaskSummary,
  type TaskView,
  type UpdateTaskBody,
} from './schema';
import { taskError } from './task-error';
import { normaliseTaskName } from './task-name';
import type { ListedRow, TaskPageQuery, TaskRow } from './task-repository';
import type { InstalledApps, TaskSettings, TaskStore } from './task-store';
import {
  analysisFpsOf,
  areasOf,
  gateOf,
  gateRegionsOf,
  overridesOf,
  pipelineTask,
  polygonFrameOf,
  startBodyOf,
  summaryOf,
} from './task-view';
import {
  applyAppConfig,
  checkAppConfigs,
  checkApps,
  checkReportUrl,
  checkRuleOverrides,
  checkTaskAreas,
  refuseTooSoon,
} from './validation';

/** Runs the analysis of video tasks; the registry decides when, the runner does the work. */
export interface VideoRunner {
  /** Resolves once the source's first frame is decoded and analysis runs; rejects leaving nothing running. */
  /** `analysis`: the task's sub-stream, analysed instead of `source` (issue 36). */
  start(
    task: PipelineTask,
    source: SourceUrl,
    timeoutMs: number,
    signal?: AbortSignal,
    analysis?: SourceUrl,
  ): Promise<FrameSize>;
  update(task: PipelineTask): void;
  stop(taskId: string): Promise<void>;
  /** Live health of a running task, or undefined when it is not running. */
  health(taskId: string): AnalysisHealth | undefined;
  /** Every task's clock breaks since the engine started (rule-clock.ts), and when the last was seen. */
  readonly clockBreaks: { readonly total: number; readonly lastAt: number | null };
  /** A running task's stream broke (it reconnects on its own) or came back. */
  on(event: 'lost', listener: (taskId: string, reason: string) => void): unknown;
  on(event: 'restored', listener: (taskId: string, info: { width: number; height: number }) => void): unknown;
}

/**
 * Which of its stored tasks an engine may run. A single workstation runs every one; a cluster node
 * only those assigned to it (engine/cluster).
 */
export interface TaskLeases {
  acquire(taskId: string): boolean;
}

const LOCAL_LEASES: TaskLeases = { acquire: () => true };

export interface TaskEvents {
  started: [TaskView];
  updated: [TaskView];
  closed: [TaskView];
  /** Removed from the listing before its 24 h were up (purge=true). */
  purged: [TaskView];
  stream_lost: [TaskView];
  stream_restored: [TaskView];
}

type TimerName = 'idle' | 'loss' | 'license' | 'reconnect' | 'healthy';

/** Settings key written when the tasks stopped with the engine, not with its process dying. */
const STOPPED_CLEANLY = 'tasks_stopped_cleanly';

/** What a live task holds in memory only: timers and source health. */
interface Runtime {
  timers: Map<TimerName, TimerHandle>;
  source?: { width: number; height: number };
  /** Why the source was last lost, while it is being reopened. */
  lastError?: string;
  /** When the stream was lost (the lifecycle clock's ms), while it is. */
  lostSince?: number;
  reconnects: number;
  backoff: ReconnectBackoff;
  images: number;
  /** Aborts a source being reopened when the task closes or the engine stops: no ffmpeg outlives it. */
  opening: AbortController;
}

const CLOSE_REASON: Record<CloseCode, string> = {
  0: 'running',
  1: 'closed by the caller',
  2: 'closed: the video stream was not restored within 5 min',
  3: 'closed: no image for more than 5 min',
  4: 'closed: an application license expired',
  5: 'closed: engine error',
};

/**
 * Every task and its lifecycle (part 3 of the contract): validation at start and update, the timers
 * that close tasks on their own, and resumption after an engine restart. The database row is written
 * before any answer, so an acknowledged task survives kill -9.
 */
export class TaskRegistry extends EventEmitter<TaskEvents> {
  private readonly runtimes = new Map<string, Runtime>();
  private purgeTimer?: TimerHandle;
  /** Status changes and purges that a full disk held back. */
  private readonly writes: SpaceWaiter;

  constructor(
    private readonly store: TaskStore,
    private readonly settings: TaskSettings,
    private readonly packageUse: PackageUse,
    private readonly clock: Clock,
    private readonly packages: InstalledApps,
    private readonly video: VideoRunner,
    /** The engine's analysis rate: video tasks without their own analysis_fps take it. */
    private readonly engineFps = DEFAULT_ANALYSIS_FPS,
    /** The task's events the outbox refused as invalid (Outbox.refused). */
    private readonly refusedEvents: (taskId: string) => number = () => 0,
  ) {
    super();
    this.writes = new SpaceWaiter(clock, (error) => {
      throw error;
    });
    video.on('lost', (taskId, reason) => this.streamLost(taskId, reason, true));
    video.on('restored', (taskId, info) => this.streamRestored(taskId, info));
  }

  /**
   * Restarts the timers of tasks that were live when the engine stopped, and reopens their sources.
   * A video task resumed maxUncleanResumes times in a row into an engine that then died is closed
   * with close_code 5 instead: whatever kills the engine, it is not resumed into a crash loop.
   */
  resumeAll(leases: TaskLeases = LOCAL_LEASES): void {
    this.purgeClosed();
    this.countResumes();
    for (const row of this.store.notClosed()) {
      // In a cluster another node may run the task now: this node keeps no copy of it.
      if (!leases.acquire(row.task_id)) {
        this.store.forget(row.task_id);
        continue;
      }
      if (row.unclean_resumes > TASK_LIMITS.maxUncleanResumes) {
        const within = `${TASK_LIMITS.resumeHealthyMs / 60_000} min`;
        this.close(
          row.task_id,
          CLOSE_CODE.engineError,
          `not resumed again: the engine stopped uncleanly within ${within} of each of its last ${TASK_LIMITS.maxUncleanResumes} resumes`,
        );
        continue;
      }
      const runtime = this.newRuntime(row.task_id);
      this.armLicenseTimer(row, runtime);
      if (row.unclean_resumes > 0) {
        this.arm(runtime, 'healthy', TASK_LIMITS.resumeHealthyMs, () =>
          this.writes.write(`healthy:${row.task_id}`, () => this.store.resumedHealthy(row.task_id)),
        );
      }
      if (row.mode === 'video') {
        this.setStatus(row.task_id, 'starting', 'starting: reopening the source after an engine restart');
        void this.reopen(row.task_id);
      } else {
        this.armIdleTimer(row.task_id, row.last_image_at ?? row.created_at);
      }
    }
  }

  /**
   * Takes over a task another node ran until now (cluster mode): stores its row as that node last
   * shared it and resumes it here, as a restart would; a video task reopens its source.
   */
  adopt(row: TaskRow): void {
    if (this.runtimes.has(row.task_id) || row.status === 'closed') return;
    // The resume guard counts this node's own restarts: a task taken over starts its count afresh.
    const { unclean_resumes: _previousNodes, ...stored } = row;
    // A definition shared by an engine before task priorities (or persistence, or GPU constraints) has none.
    this.store.replace({
      ...stored,
      priority: stored.priority ?? null,
      persistent: stored.persistent ?? 0,
      motion_gate: stored.motion_gate ?? 1,
      gpu: stored.gpu ?? null,
      rule_overrides: stored.rule_overrides ?? '{}',
      status: 'starting',
    });
    const runtime = this.newRuntime(row.task_id);
    this.armLicenseTimer(row, runtime);
    if (row.mode === 'video') {
      this.setStatus(row.task_id, 'starting', 'starting: taken over from another node');
      void this.reopen(row.task_id);
    } else {
      this.armIdleTimer(row.task_id, row.last_image_at ?? row.created_at);
    }
  }

  /**
   * Stops running a task without closing it, and forgets it (cluster mode: another node runs it now).
   * Its stored events stay in the outbox.
   */
  async release(taskId: string): Promise<void> {
    await this.stopRuntime(taskId);
    // A full disk keeps the row until there is room: it is no longer run here either way.
    this.writes.write(`forget:${taskId}`, () => this.store.forget(taskId));
  }

  /** The tasks this engine runs now. */
  running(): string[] {
    return [...this.runtimes.keys()];
  }

  /** Whether this engine runs the task now (its timers and, for a video task, its source). */
  runs(taskId: string): boolean {
    return this.runtimes.has(taskId);
  }

  /** The task as stored, for another node to take it over; undefined when there is none. */
  storedRow(taskId: string): TaskRow | undefined {
    return this.store.find(taskId);
  }

  /** Starts a task; `drawnOn`, the frame its areas were drawn on when not the source as it is now. */
  /** `signal` aborts the start while its source opens (its client went away): nothing is kept. */
  async start(body: StartTaskBody, drawnOn?: FrameSize | null, signal?: AbortSignal): Promise<TaskView> {
    const taskId = randomUUID();
    // From its checks until its row is stored (a video source takes up to 15 s to open), the task
    // counts as using its package, so an upgrade cannot commit new apps under it meanwhile.
    this.packageUse.starts(taskId, body.zapk_id);
    try {
      return await this.startTask(taskId, body, drawnOn ?? undefined, signal);
    } finally {
      this.packageUse.started(taskId);
    }
  }

  /**
   * Starts a new task with a closed task's settings (the console's "start again"): every field it
   * was started or updated with, its callbacks' secret included, checked as a new start is. Its areas
   * keep the frame they were drawn on, so they follow the source whatever its size now.
   */
  async startAgain(taskId: string): Promise<TaskView> {
    const row = this.row(taskId);
    if (row.status !== 'closed')
      throw taskError('task.not_closed', `task ${taskId} is not closed: it runs, so it cannot start again`);
    return this.start(startBodyOf(row), polygonFrameOf(row));
  }

  private async startTask(
    taskId: string,
    body: StartTaskBody,
    drawnOn?: FrameSize,
    signal?: AbortSignal,
  ): Promise<TaskView> {
    const mode = body.mode ?? 'video';
    const apps = checkApps(this.packages, body.zapk_id, body.app_ids, mode, this.clock.now());
    const appConfigs = checkAppConfigs(body.app_configs ?? [], apps);
    checkTaskAreas(appConfigs);
    const reportUrl = checkReportUrl(body.report_url ?? '');
    for (const field of [
      'analysis_fps',
      'persistent',
      'motion_gate',
      'gate_regions',
      'rule_overrides',
    ] as const)
      if (mode !== 'video' && body[field] !== undefined)
        throw taskError('task.invalid', `body.${field}: is only for video tasks, not ${mode} tasks`, field);
    const ruleOverrides = checkRuleOverrides({}, body.rule_overrides ?? {}, apps);
    const osd: Required<Osd> = { ...DEFAULT_OSD, ...body.osd };

    const now = this.clock.now();
    const row: TaskRow = {
      task_id: taskId,
      name: normaliseTaskName(body.name ?? ''),
      mode,
      zapk_id: body.zapk_id,
      app_ids: JSON.stringify(body.app_ids),
      device_id: body.device_id ?? '',
      business_id: body.business_id ?? '',
      video_url: body.video_url ?? '',
      analysis_url: body.analysis_url ?? null,
      report_url: reportUrl,
      osd: JSON.stringify(osd),
      app_configs: JSON.stringify(appConfigs),
      status: 'running',
      close_code: CLOSE_CODE.running,
      dump: '',
      created_at: now,
      updated_at: now,
      closed_at: null,
      last_image_at: null,
      report_secret: body.report_secret ?? '',
      polygon_width: null,
      polygon_height: null,
      unclean_resumes: 0,
      analysis_fps: body.analysis_fps ?? null,
      priority: body.priority ?? null,
      persistent: body.persistent ? 1 : 0,
      motion_gate: gateMode(body.motion_gate ?? true, body.gate_regions ?? false),
      gpu: body.gpu ?? null,
      rule_overrides: JSON.stringify(ruleOverrides),
    };

    let source: FrameSize | undefined;
    if (mode === 'video') {
      if (!body.video_url)
        throw taskError('task.invalid', 'body.video_url: is required for a video task', 'video_url');
      const parsed = parseSourceUrl(body.video_url);
      if ('error' in parsed) throw taskError('task.invalid', `body.${parsed.error}`, 'video_url');
      const analysis = body.analysis_url ? parseSourceUrl(body.analysis_url, 'analysis_url') : undefined;
      if (analysis && 'error' in analysis)
        throw taskError('task.invalid', `body.${analysis.error}`, 'analysis_url');
      try {
        // Polygons are drawn on the source as it is now: whatever size it has from here on, they follow.
        source = await this.video.start(
          pipelineTask(row, this.engineFps),
          parsed,
          TASK_LIMITS.pullTimeoutMs,
          signal,
          analysis,
        );
      } catch (error) {
        throw sourceRefusal(error, 'opened');
      }
      row.polygon_width = (drawnOn ?? source).width;
      row.polygon_height = (drawnOn ?? source).height;
      this.video.update(pipelineTask(row, this.engineFps));
      try {
        // The package may have gone while the source was opening; check again before committing.
        checkApps(this.packages, body.zapk_id, body.app_ids, mode, this.clock.now());
      } catch (error) {
        await this.video.stop(row.task_id);
        throw error;
      }
    } else {
      for (const field of ['video_url', 'analysis_url'] as const)
        if (body[field])
          throw taskError('task.invalid', `body.${field}: is only for video tasks, not ${mode} tasks`, field);
    }

    const runtime = this.newRuntime(row.task_id);
    runtime.source = source;
    row.dump = this.describe(row, runtime);
    try {
      this.store.insert(row);
    } catch (error) {
      // Not stored (a full disk): nothing of the task may keep running.
      await this.stopRuntime(row.task_id);
      throw error;
    }
    this.armLicenseTimer(row, runtime);
    if (mode !== 'video') this.armIdleTimer(row.task_id, now);
    const view = this.view(row);
    this.emit('started', view);
    return view;
  }

  /** One page of the listing, and how many tasks its filter matches in all. */
  list(query: TaskPageQuery): { items: TaskSummary[]; total: number } {
    return { items: this.store.page(query).map((row) => this.summary(row)), total: this.store.count(query) };
  }

  /**
   * A stored row as the listing shows it, with its health: live where this engine runs it, at rest
   * otherwise (a task of another node of a cluster, as the site stored it).
   */
  summarize(row: ListedRow): TaskSummary {
    return this.summary(row);
  }

  /**
   * The task's app_configs as stored, JSON text: what a listing with areas passes through without
   * parsing and serializing polygons again.
   */
  storedAreas(taskId: string): string {
    const areas = this.store.areas(taskId);
    if (areas === undefined) throw taskError('task.not_found', `no task "${taskId}"`);
    return areas;
  }

  /** Listed tasks by status. */
  statusCounts(): Partial<Record<TaskStatus, number>> {
    return this.store.statusCounts();
  }

  /** Every video task's clock breaks since the engine started, and when the last was seen. */
  get clockBreaks(): { readonly total: number; readonly lastAt: number | null } {
    return this.video.clockBreaks;
  }

  get(taskId: string): TaskView {
    return this.view(this.row(taskId));
  }

  /** The task, refused with 409 when it is closed or not of the given mode. */
  liveTask(taskId: string, mode: TaskMode): TaskView {
    return this.view(this.liveRow(taskId, mode));
  }

  /** 4.7 plus app_configs: applied to the running task without restarting it. */
  update(taskId: string, body: UpdateTaskBody): TaskView {
    const row = this.liveRow(taskId);
    for (const field of ['analysis_fps', 'motion_gate', 'gate_regions', 'rule_overrides'] as const)
      if (row.mode !== 'video' && body[field] !== undefined)
        throw taskError(
          'task.invalid',
          `body.${field}: is only for video tasks, not ${row.mode} tasks`,
          field,
        );
    const appIds = body.app_ids ?? (JSON.parse(row.app_ids) as string[]);
    const apps = checkApps(this.packages, row.zapk_id, appIds, row.mode, this.clock.now());
    const runtime = this.runtimes.get(taskId);
    // New polygons are drawn on the source as it is now; kept ones are brought to that size too, so
    // that one stored frame size holds for all of them.
    const storedFrame = polygonFrameOf(row);
    const frame = body.app_configs && runtime?.source ? runtime.source : storedFrame;
    // Polygons of apps the task no longer runs go; given ones replace the app's previous polygon.
    const configs = new Map<string, AppConfig>();
    for (const config of areasOf(row)) {
      if (!appIds.includes(config.app_id)) continue;
      configs.set(config.app_id, frame ? { ...config, ...scaleAreas(config, storedFrame, frame) } : config);
    }
    for (const config of checkAppConfigs(body.app_configs ?? [], apps)) {
      configs.set(config.app_id, applyAppConfig(configs.get(config.app_id), config));
    }
    // New areas must leave the task within its bounds; a task stored before them keeps what it has
    // until its areas are changed.
    if (body.app_configs) checkTaskAreas([...configs.values()]);
    const ruleOverrides = checkRuleOverrides(overridesOf(row), body.rule_overrides ?? {}, apps);
    const osd = { ...(JSON.parse(row.osd) as Osd), ...body.osd };
    this.store.change({
      task_id: taskId,
      name: body.name === undefined ? row.name : normaliseTaskName(body.name),
      analysis_fps: body.analysis_fps === undefined ? row.analysis_fps : body.analysis_fps,
      priority: body.priority ?? row.priority,
      persistent: body.persistent === undefined ? row.persistent : Number(body.persistent),
      motion_gate: gateMode(
        body.motion_gate ?? gateOf(row),
        body.gate_regions ?? (body.motion_gate === false ? false : gateRegionsOf(row)),
      ),
      gpu: body.gpu ?? row.gpu,
      app_ids: JSON.stringify(appIds),
      app_configs: JSON.stringify([...configs.values()]),
      rule_overrides: JSON.stringify(ruleOverrides),
      osd: JSON.stringify(osd),
      polygon_width: frame?.width ?? null,
      polygon_height: frame?.height ?? null,
      updated_at: this.clock.now(),
    });
    const updated = this.row(taskId);
    // The apps changed, so the first license to run out may have too.
    if (runtime) this.armLicenseTimer(updated, runtime);
    if (runtime && body.persistent !== undefined) this.armLossTimer(updated, runtime);
    if (updated.mode === 'video') this.video.update(pipelineTask(updated, this.engineFps));
    const view = this.get(taskId);
    this.emit('updated', view);
    return view;
  }

  /** Closes a task; closing a closed task again changes nothing and answers as before. */
  close(taskId: string, code: CloseCode, detail = ''): TaskView {
    const row = this.row(taskId);
    if (row.status === 'closed') return this.view(row);
    const now = this.clock.now();
    const dump = detail ? `${CLOSE_REASON[code]} (${detail})` : CLOSE_REASON[code];
    // Stored first: a close the disk refuses leaves the task running as it was.
    this.store.close(taskId, code, dump, now);
    this.stopRuntime(taskId);
    const view = this.get(taskId);
    this.emit('closed', view);
    return view;
  }

  /**
   * Removes a closed task from the listing and from storage now, rather than 24 h after it closed;
   * answers it as it was. Its undelivered events still go out: the outbox keeps them and where they
   * go (engine/callbacks/outbox.ts).
   */
  purge(taskId: string): TaskView {
    const row = this.row(taskId);
    if (row.status !== 'closed')
      throw taskError(
        'task.not_closed',
        `task ${taskId} is not closed: close it first (DELETE without purge), then purge it`,
      );
    const view = this.view(row);
    this.store.purgeOne(taskId);
    this.emit('purged', view);
    return view;
  }

  /**
   * Admits one image to an image or diff task: refuses one sent less than 1 s after the previous
   * one (not queued), and restarts the 5 min idle timer.
   */
  admitImage(taskId: string, mode: 'image' | 'diff'): void {
    const row = this.liveRow(taskId, mode);
    const now = this.clock.now();
    refuseTooSoon(row, now);
    const runtime = this.runtimes.get(taskId);
    const dump = runtime ? this.describe(row, { ...runtime, images: runtime.images + 1 }) : row.dump;
    this.store.imageReceived(taskId, dump, now);
    if (runtime) runtime.images += 1;
    this.armIdleTimer(taskId, now);
  }

  /** What admitImage would refuse for the 1 s rule, refused before an upload's pixels are decoded. */
  checkImageInterval(taskId: string, mode: 'image' | 'diff'): void {
    refuseTooSoon(this.liveRow(taskId, mode), this.clock.now());
  }

  /**
   * Called when a video task's stream breaks: the 5 min close timer runs. A stream that heals itself
   * (the analysis' watchdog) reconnects on its own; otherwise the registry reopens it with backoff.
   */
  streamLost(taskId: string, reason: string, selfHealing = false): void {
    // A stream's word on a task closed or purged meanwhile changes nothing (and throws nothing).
    const row = this.store.find(taskId);
    const runtime = this.runtimes.get(taskId);
    if (!row || row.status === 'closed' || !runtime) return;
    runtime.lostSince ??= this.clock.now();
    runtime.lastError = reason;
    if (!runtime.timers.has('loss')) this.armLossTimer(row, runtime);
    this.setStatus(
      taskId,
      'stream_lost',
      `stream lost: ${reason}; reconnecting (${runtime.reconnects} reconnects so far)`,
    );
    this.emit('stream_lost', this.get(taskId));
    if (selfHealing) return;
    this.arm(runtime, 'reconnect', runtime.backoff.next(), () => void this.reopen(taskId));
  }

  streamRestored(taskId: string, source: { width: number; height: number }): void {
    const row = this.store.find(taskId);
    const runtime = this.runtimes.get(taskId);
    if (!row || row.status === 'closed' || !runtime) return;
    const wasLost = row.status === 'stream_lost';
    this.disarm(runtime, 'loss');
    this.disarm(runtime, 'reconnect');
    runtime.source = source;
    runtime.lastError = undefined;
    runtime.lostSince = undefined;
    runtime.backoff.reset();
    if (wasLost) runtime.reconnects += 1;
    this.setStatus(taskId, 'running', this.describe({ ...row, status: 'running' }, runtime));
    if (wasLost) this.emit('stream_restored', this.get(taskId));
  }

  /** Stops every timer and stream without closing any task: they resume when the engine starts again. */
  async shutdown(): Promise<void> {
    const stopping = [...this.runtimes.keys()].map((taskId) => this.stopRuntime(taskId));
    if (this.purgeTimer) this.clock.clearTimeout(this.purgeTimer);
    this.writes.close();
    await Promise.all(stopping);
    // A clean stop: the next start resumes the tasks without counting it against them (on a full
    // disk it counts once, which is the safe side).
    writeUnlessFull(() => this.settings.set(STOPPED_CLEANLY, this.clock.now()));
  }

  /**
   * Counts, durably and before any source reopens, the resume of each live video task after an
   * engine that did not stop cleanly; a clean stop starts every count afresh. Image and diff tasks
   * are not counted: resuming them only re-arms a timer.
   */
  private countResumes(): void {
    // On a full disk nothing is counted: the tasks resume, and the guard counts again once space returns.
    writeUnlessFull(() =>
      this.settings.transaction(() => this.store.countResumes(this.settings.remove(STOPPED_CLEANLY))),
    );
  }

  private async reopen(taskId: string): Promise<void> {
    const runtime = this.runtimes.get(taskId);
    if (!runtime) return;
    const row = this.row(taskId);
    const parsed = parseSourceUrl(row.video_url);
    if ('error' in parsed) return this.streamLost(taskId, parsed.error);
    const analysis = row.analysis_url ? parseSourceUrl(row.analysis_url, 'analysis_url') : undefined;
    if (analysis && 'error' in analysis) return this.streamLost(taskId, analysis.error);
    try {
      const source = await this.video.start(
        pipelineTask(row, this.engineFps),
        parsed,
        TASK_LIMITS.pullTimeoutMs,
        runtime.opening.signal,
        analysis,
      );
      if (this.runtimes.get(taskId) === runtime) this.streamRestored(taskId, source);
    } catch (error) {
      if (this.runtimes.get(taskId) === runtime) this.streamLost(taskId, (error as Error).message);
    }
  }

  /**
   * A lost stream closes its task (close_code 2) 5 min after it was lost, unless the task is
   * persistent: then it is retried for as long as the task exists. Called when the stream is lost
   * and when the task's persistence changes while it is.
   */
  private armLossTimer(row: TaskRow, runtime: Runtime): void {
    if (row.persistent === 1 || runtime.lostSince === undefined) {
      this.disarm(runtime, 'loss');
      return;
    }
    const due = runtime.lostSince + TASK_LIMITS.streamLossCloseMs - this.clock.now();
    this.arm(runtime, 'loss', Math.max(0, due), () =>
      this.close(row.task_id, CLOSE_CODE.streamLost, `last error: ${runtime.lastError ?? 'stream lost'}`),
    );
  }

  private armIdleTimer(taskId: string, lastImageAt: number): void {
    const runtime = this.runtimes.get(taskId);
    if (!runtime) return;
    const due = lastImageAt + TASK_LIMITS.imageIdleCloseMs - this.clock.now();
    this.arm(runtime, 'idle', Math.max(0, due), () => this.close(taskId, CLOSE_CODE.noImage));
  }

  /** Closes the task with code 4 when the first of its time-limited licenses runs out. */
  private armLicenseTimer(row: TaskRow, runtime: Runtime): void {
    const expiries = (JSON.parse(row.app_ids) as string[])
      .map((appId) => this.packages.app(row.zapk_id, appId))
      .filter((app) => !app.perpetual)
      .map((app) => ({ appId: app.app_id, at: app.license_expire * 1000 }))
      .sort((a, b) => a.at - b.at);
    const first = expiries[0];
    if (!first) {
      this.disarm(runtime, 'license');
      return;
    }
    this.arm(runtime, 'license', Math.max(0, first.at - this.clock.now()), () =>
      this.close(row.task_id, CLOSE_CODE.licenseExpired, `application "${first.appId}"`),
    );
  }

  private arm(runtime: Runtime, name: TimerName, ms: number, fn: () => void): void {
    this.disarm(runtime, name);
    runtime.timers.set(
      name,
      this.clock.setTimeout(() => {
        runtime.timers.delete(name);
        try {
          fn();
        } catch (error) {
          // A close the disk has no room for is tried again, the task running meanwhile (unless it
          // was stopped, which aborts its opening).
          if (!isDiskFull(error)) throw error;
          if (!runtime.opening.signal.aborted) this.arm(runtime, name, DISK_RETRY_MS, fn);
        }
      }, ms),
    );
  }

  private disarm(runtime: Runtime, name: TimerName): void {
    const handle = runtime.timers.get(name);
    if (handle) this.clock.clearTimeout(handle);
    runtime.timers.delete(name);
  }

  private newRuntime(taskId: string): Runtime {
    const runtime: Runtime = {
      timers: new Map(),
      reconnects: 0,
      backoff: new ReconnectBackoff(() => reconnectPolicyOf(this.store.find(taskId)?.persistent === 1)),
      images: 0,
      opening: new AbortController(),
    };
    this.runtimes.set(taskId, runtime);
    this.schedulePurge();
    return runtime;
  }

  private async stopRuntime(taskId: string): Promise<void> {
    const runtime = this.runtimes.get(taskId);
    if (!runtime) return;
    for (const name of [...runtime.timers.keys()]) this.disarm(runtime, name);
    runtime.opening.abort();
    this.runtimes.delete(taskId);
    await this.video.stop(taskId);
  }

  /** Closed tasks leave the listing 24 h after closing; checked hourly. */
  private schedulePurge(): void {
    if (this.purgeTimer) return;
    this.purgeTimer = this.clock.setTimeout(() => {
      this.purgeTimer = undefined;
      this.purgeClosed();
      this.schedulePurge();
    }, 60 * 60_000);
  }

  private purgeClosed(): void {
    const before = this.clock.now() - TASK_LIMITS.closedRetentionMs;
    this.writes.write('purge', () => this.store.purgeClosed(before));
  }

  private describe(row: TaskRow, runtime: Runtime): string {
    if (row.mode !== 'video') return `running, ${runtime.images} images received`;
    const size = runtime.source ? `${runtime.source.width}x${runtime.source.height}` : 'unknown size';
    return `running, source ${size}, ${runtime.reconnects} reconnects`;
  }

  /** The whole task: its summary and its areas. */
  private view(row: TaskRow): TaskView {
    return { ...this.summary(row), app_configs: areasOf(row) };
  }

  /** The stored row as the listing shows it, with its health; a running video task's is live. */
  private summary(row: ListedRow): TaskSummary {
    const live =
      (row.status === 'running' || row.status === 'stream_lost') && row.mode === 'video'
        ? this.video.health(row.task_id)
        : undefined;
    const runtime = this.runtimes.get(row.task_id);
    const reopening =
      row.mode === 'video' && runtime && (row.status === 'starting' || row.status === 'stream_lost')
        ? { ...runtime, status: row.status }
        : undefined;
    const target = row.mode === 'video' ? analysisFpsOf(row, this.engineFps) : null;
    const health = {
      ...(live ?? restingHealth(runtime?.images ?? 0, reopening, target)),
      events_refused: this.refusedEvents(row.task_id),
      stream_lost_since: row.status === 'stream_lost' ? (runtime?.lostSince ?? null) : null,
    };
    return { ...summaryOf(row, this.engineFps), health, ...(live ? { dump: renderDump(health) } : {}) };
  }

  /** Stored when there is room: on a full disk the listing shows the previous status until then. */
  private setStatus(taskId: string, status: TaskStatus, dump: string): void {
    const now = this.clock.now();
    this.writes.write(`status:${taskId}`, () => this.store.setStatus(taskId, status, dump, now));
  }

  /** A task that is not closed and, when a mode is given, of that mode. */
  private liveRow(taskId: string, mode?: TaskMode): TaskRow {
    const row = this.row(taskId);
    if (row.status === 'closed')
      throw taskError('task.closed', `task ${taskId} is closed (close_code ${row.close_code})`);
    if (mode && row.mode !== mode) {
      throw taskError(
        'task.wrong_mode',
        `task ${taskId} is a ${row.mode} task; this endpoint needs a ${mode} task`,
      );
    }
    return row;
  }

  private row(taskId: string): TaskRow {
    const row = this.store.find(taskId);
    if (!row) throw taskError('task.not_found', `no task "${taskId}"`);
    return row;
  }
}

/** The stored motion gate (task-repository.ts): crops need the gate on. */
function gateMode(on: boolean, crops: boolean): number {
  if (crops && !on)
    throw taskError('task.invalid', 'body.gate_regions: needs motion_gate true', 'gate_regions');
  return crops ? 2 : on ? 1 : 0;
}
