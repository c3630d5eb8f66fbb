import { EventEmitter } from 'node:events';
import type { ClipBuffers } from '../clips/clip-buffers';
import type { AnalysisHealth } from '../contract/health';
import { type LiveDeps, TaskLive } from '../live/task-live';
import type { PixelSize } from '../media/analysis-size';
import type { MediaFolders } from '../media/media-folders';
import type { SourceUrl } from '../media/source-url';
import type { StreamWatchdog } from '../media/stream-watchdog';
import type { AppCounts } from '../rules/counts';
import { HeatGrid } from './heat-grid';
import { type AnalysedFrame, type PipelineDeps, type PipelineTask, TaskPipeline } from './task-pipeline';

export interface VideoAnalysisDeps extends PipelineDeps {
  /** Where file sources may come from: a task's file outside them is refused before anything runs. */
  sources: MediaFolders;
  /** Opens a task's source; `analysisFps` says the task's rate whenever an ffmpeg is made. */
  /** A watchdog for the task's source; `task` is the task as last updated, whenever the stream reads it. */
  openStream(source: SourceUrl, task: () => PipelineTask): StreamWatchdog;
  /** What the AI video of running tasks (4.10) needs; without it no task has one. */
  live?: LiveDeps;
  /** Running tasks' buffers of their own streams, for clips: a stopped task's goes with it. */
  clipBuffers?: ClipBuffers;
}

interface Running {
  stream: StreamWatchdog;
  pipeline: TaskPipeline;
  task: PipelineTask;
  /** The task's AI videos, from the first request for one. */
  live: TaskLive | null;
  heat: HeatGrid;
}

/** A task's stream broke (it reconnects on its own) or came back: the task registry keeps the books. */
export interface VideoAnalysisEvents {
  lost: [taskId: string, reason: string];
  /** With the source's size. */
  restored: [taskId: string, source: PixelSize];
  /** A frame's analysis failed (the task's health counts it): the engine log says why. */
  analysis_error: [taskId: string, reason: string];
}

/** Every running video task's stream and pipeline, started, updated and stopped by the task registry. */
export class VideoAnalysis extends EventEmitter<VideoAnalysisEvents> {
  private readonly running = new Map<string, Running>();
  private readonly watchers = new Map<string, Set<(frame: AnalysedFrame) => void>>();
  /** Every task's clock breaks since the engine started (GET /api/system); a task's own are in its health. */
  readonly clockBreaks: { total: number; lastAt: number | null } = { total: 0, lastAt: null };

  constructor(private readonly deps: VideoAnalysisDeps) {
    super();
  }

  /**
   * Calls the listener with every analysed frame of the task, through restarts of its pipeline, until
   * the returned function is called. The listener runs inside the analysis: it must be quick.
   */
  watch(taskId: string, listener: (frame: AnalysedFrame) => void): () => void {
    const listeners = this.watchers.get(taskId) ?? new Set();
    this.watchers.set(taskId, listeners);
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.watchers.get(taskId) === listeners) this.watchers.delete(taskId);
    };
  }

  /**
   * Opens the task's source and starts analysing once its first frame is decoded; resolves with the
   * source's size (that of its pictures, not of the frames analysed). Rejects when no
   * frame comes within the timeout or the signal aborts; nothing of the task keeps running then.
   */
  async start(
    task: PipelineTask,
    source: SourceUrl,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<PixelSize> {
    const readable = await this.deps.sources.resolve(source);
    await this.stop(task.task_id);
    // The task as last updated (its rate, its reconnect policy), whenever the stream reads it.
    const stream = this.deps.openStream(readable, () => this.running.get(task.task_id)?.task ?? task);
    const pipeline = new TaskPipeline(task, stream, this.deps);
    const heat = new HeatGrid();
    pipeline.on('failed', (reason) => this.emit('analysis_error', task.task_id, reason));
    pipeline.on('clockBreak', (at) => {
      this.clockBreaks.total++;
      this.clockBreaks.lastAt = at;
    });
    pipeline.on('analysed', (frame) => {
      heat.addFrame(frame);
      for (const listener of this.watchers.get(task.task_id) ?? []) listener(frame);
    });
    const onAbort = () => void stream.close();
    signal?.addEventListener('abort', onAbort);
    try {
      const info = await stream.start(timeoutMs);
      if (signal?.aborted) throw new Error('the task was closed while its source was opening');
      stream.on('lost', ({ reason }) => this.emit('lost', task.task_id, reason));
      stream.on('restored', (restored) => this.emit('restored', task.task_id, restored.source));
      this.running.set(task.task_id, { stream, pipeline, task, live: null, heat });
      return info.source;
    } catch (error) {
      pipeline.stop();
      await stream.close();
      throw error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  update(task: PipelineTask): void {
    const running = this.running.get(task.task_id);
    if (!running) return;
    const rateChanged = running.task.analysis_fps !== task.analysis_fps;
    running.task = task;
    running.pipeline.update(task);
    if (rateChanged) void running.stream.analysisRateChanged();
    running.live?.setOsd(task.osd);
  }

  /** Whether the task's video is analysed here now. */
  runs(taskId: string): boolean {
    return this.running.has(taskId);
  }

  /** The AI videos of a running task (created on first use); undefined when it does not run. */
  live(taskId: string): TaskLive | undefined {
    const running = this.running.get(taskId);
    if (!running || !this.deps.live) return undefined;
    running.live ??= new TaskLive(running.stream, running.pipeline, running.task.osd, this.deps.live);
    return running.live;
  }

  /** Opens a running task's source again (its clip recording was turned off); nothing when it does not run. */
  reopenSource(taskId: string): void {
    void this.running.get(taskId)?.stream.reopen();
  }

  async stop(taskId: string): Promise<void> {
    const running = this.running.get(taskId);
    if (!running) return;
    this.running.delete(taskId);
    running.pipeline.stop();
    await Promise.all([running.live?.closeAll(), running.stream.close()]);
    this.deps.clipBuffers?.end(taskId);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.running.keys()].map((taskId) => this.stop(taskId)));
  }

  /** Per app of a running task, its line crossings and zone occupancy; undefined when not running. */
  counts(taskId: string): Map<string, AppCounts> | undefined {
    return this.running.get(taskId)?.pipeline.counts();
  }

  /**
   * How far apart a running task's analysed frames come: its analysis rate, or the source's when
   * that is slower. Undefined when the task does not run.
   */
  frameIntervalMs(taskId: string): number | undefined {
    const running = this.running.get(taskId);
    if (!running) return undefined;
    const sourceFps = running.stream.info?.fps ?? running.task.analysis_fps;
    return 1000 / Math.min(running.task.analysis_fps, sourceFps);
  }

  /** Where a running task's objects stood since its analysis started (or the last reset); undefined when not running. */
  heatmap(taskId: string): HeatGrid | undefined {
    return this.running.get(taskId)?.heat;
  }

  /** The typed health of a running task: stream, analysis and AI video figures; undefined when not running. */
  health(taskId: string): AnalysisHealth | undefined {
    const running = this.running.get(taskId);
    if (!running) return undefined;
    const { pipeline, stream } = running;
    const {
      analysed,
      dropped,
      blackFrames,
      failures,
      lastError,
      inferenceMs,
      clockBreaks,
      lastClockBreakAt,
    } = pipeline.stats;
    const overload = stream.overload ?? this.deps.overload?.() ?? null;
    const clips = this.deps.clipBuffers?.state(taskId) ?? { clips: 'off', reason: null };
    return {
      stream: {
        state: stream.state,
        width: stream.info?.source.width ?? null,
        height: stream.info?.source.height ?? null,
        fps: stream.fps,
        reconnects: stream.reconnects,
        black_frames: blackFrames,
        last_error: stream.lastError || null,
        full_rate: stream.fullRate,
        rate_switch_error: stream.rateSwitchFailure || null,
        decoder: { hwaccel: stream.decoder.hwaccel, fallback: stream.decoder.fallback },
      },
      overloaded: overload !== null,
      overload,
      analysed_fps: pipeline.analysedFps(),
      target_fps: running.task.analysis_fps,
      frames_analysed: analysed,
      frames_dropped: dropped,
      analysis_errors: failures,
      last_analysis_error: lastError || null,
      inference_ms: analysed > 0 ? inferenceMs : null,
      images: 0,
      ai_video: running.live?.health() ?? [],
      clock_breaks: clockBreaks,
      last_clock_break_at: lastClockBreakAt,
      clips: clips.clips,
      clips_reason: clips.reason,
      gate: pipeline.gateHealth(),
    };
  }
}
