import { EventEmitter } from 'node:events';
import type { GateHealth } from '../contract/health';
import { messageEvent } from '../events/message';
import type { NewEvent } from '../events/schema';
import { frameTime } from '../live/box-motion';
import type { AnalysisStream, WatchdogFrame } from '../media/stream-watchdog';
import { areaZones, type OverlayZone } from '../osd/overlay';
import { appSnapshot } from '../osd/snapshot';
import type { InstalledApp, PackageRegistry } from '../packages/registry';
import type { AppCounts } from '../rules/counts';
import type { RuleResult } from '../rules/evaluate';
import { layRule } from '../rules/override';
import type { FrameInfo, ShownObject } from '../rules/rule-kind';
import type { AppAreas, AppConfig, Osd, RuleOverrides } from '../tasks/schema';
import { ByteTracker } from '../tracking/byte-tracker';
import type { Box, Detection, Frame, FrameSize, TrackedObject } from '../vision/types';
import { AppRuntime } from './app-runtime';
import type { TaskDetector } from './detectors';
import { type GateDecision, type LiveTrack, MotionGate, needsModel } from './motion-gate';
import { detectTiles } from './region-crops';
import { area, planTiles } from './region-plan';
import { RuleClock } from './rule-clock';
import { boxInFrame, detectionsInSource } from './source-space';

/** Where an event goes: the outbox stores it durably before anything else sees it. */
export interface DeliveryTarget {
  task_id: string;
  report_url: string;
  report_secret?: string;
}

export interface EventSink {
  enqueue(target: DeliveryTarget, event: NewEvent): unknown;
}

/** What the pipeline needs of a task; the registry hands a fresh copy on every update. */
export interface PipelineTask {
  task_id: string;
  zapk_id: string;
  app_ids: string[];
  app_configs: AppConfig[];
  /** Per app, this camera's overrides of the app's rule, laid over it before the app runs here. */
  rule_overrides: RuleOverrides;
  osd: Required<Osd>;
  business_id: string;
  report_url: string;
  report_secret?: string;
  /** Frame size the polygons were drawn on; null when unknown (then they are taken as drawn on the current size). */
  polygon_frame: FrameSize | null;
  /**
   * Most frames analysed per second when the stream delivers more (it passes every frame while an
   * AI video is encoded).
   */
  analysis_fps: number;
  /** A lost stream is retried every few seconds for as long as the task exists (reconnect-policy.ts). */
  persistent: boolean;
  /** The detector runs on regions around motion and live tracks, and frames with nothing in them rest (motion-gate.ts). */
  motion_gate: boolean;
  /** With the gate on, the detector runs on crops around motion and tracks rather than the whole frame. */
  gate_regions: boolean;
}

export interface PipelineDeps {
  packages: PackageRegistry;
  sink: EventSink;
  createDetector(app: InstalledApp): TaskDetector;
  /** Event timestamps, ms since the epoch. */
  now(): number;
  /**
   * True while an inference host has nothing to do: a frame that would be dropped may then start
   * beside the one in analysis, so one fast stream is not held to one host. Unset: never.
   */
  inferenceIdle?(): boolean;
  /**
   * Why the engine is overloaded now (its event loop runs late, an inference host is starved for
   * CPU); null when it is not. Frames are then shed: a displaced one is dropped, never started beside
   * the one in analysis. Unset: never.
   */
  overload?(): string | null;
}

/** The latest analysis of one app, kept for the live overlay and the console. */
export interface AppOverlay {
  appId: string;
  /** The app's name, which a label merged from several apps names it by (default its id). */
  appName?: string;
  zone: OverlayZone;
  /** Its named zones and masks (extensions), drawn beside the zone. */
  areas: OverlayZone[];
  objects: ShownObject[];
}

/** Everything one analysed frame gave, for the live overlay, the console and sample collection. */
export interface AnalysedFrame {
  frameId: number;
  timestampMs: number;
  /** The frame's time for the AI video's drawings (box-motion.ts frameTime); unset: when it was analysed. */
  shownAt?: number;
  /** The source's size: detections, tracks, zones and objects are all in its pixels. */
  size: FrameSize;
  /** The size of the decoded frame, the source bounded for analysis: what snapshots and the AI video draw on. */
  frameSize: FrameSize;
  /**
   * The decoded pixels (not annotated); null for a black fill frame while the stream is lost. Pooled:
   * valid during the 'analysed' event only, so a listener copies what it keeps.
   */
  frame: Frame | null;
  /** Per model key: what the model found (above its score_threshold) and the tracks after this frame. */
  models: Map<string, { detections: Detection[]; tracked: TrackedObject[] }>;
  /** Per app, in the task's order: its rule's verdict on this frame, and its areas on this frame. */
  results: Array<{ appId: string; modelKey: string; result: RuleResult; areas: AppAreas }>;
  overlays: AppOverlay[];
}

export interface PipelineEvents {
  analysed: [AnalysedFrame];
  /** A frame's analysis or its event failed (counted in stats): why. */
  failed: [reason: string];
  /** The source's timestamps stepped back, jumped or wrapped at this frame (ms since the epoch). */
  clockBreak: [at: number];
}

type NumberedFrame = WatchdogFrame & { frameId: number };

/** A frame's start, taken in frame order: the settings it runs under, its rule-clock time, the gate's decision. */
interface Plan {
  task: PipelineTask;
  mediaMs: number;
  /** Null for a black fill frame, which runs no model. */
  decision: GateDecision | null;
}

/** A frame waiting for the analysis, with its plan when a resting task decided it on arrival. */
interface Waiting {
  frame: NumberedFrame;
  plan?: Plan;
}

/** What a frame's models found, before tracking (which takes frames strictly in order). */
interface Detected {
  /** The settings the frame started under: it is judged and reported under them. */
  task: PipelineTask;
  /** The pixels as the detectors handed them back. */
  frame: Frame;
  /** Per model key, in source pixels; empty for a black fill frame. */
  detections: Map<string, Detection[]>;
  /** The frame's time on the rule clock, which the rules and the motion gate measure by. */
  mediaMs: number;
  /**
   * What the motion gate decided for the frame: skip (nothing runs on it), the regions the detector
   * looked at (in the frame's pixels), or null: the whole frame (a black fill frame too).
   */
  gate: { kind: 'skip' } | { kind: 'regions'; regions: Box[] } | null;
}

const RATE_WINDOW_MS = 5_000;
// A second frame fills a thread the first leaves idle; a third could only queue behind them.
const MAX_IN_ANALYSIS = 2;
/**
 * Frames a resting task passes through without a model (skipped, or carrying still tracks), queued
 * for their report behind a frame in analysis: 2 s at 5 fps. More are dropped as before.
 */
const MAX_PASSING = 10;
/**
 * Frames waiting behind the ones in analysis. Two, so that frames arriving in a clump (a network's
 * burst, a decoder catching up after the cores were busy) are all analysed, a frame interval later;
 * more only add latency when the cores fall behind. An overloaded engine keeps one.
 */
const MAX_WAITING = 2;

/**
 * One video task's analysis: frames from its stream -> detectors -> trackers -> each app's rule ->
 * events with annotated snapshots. One frame is in analysis and at most two wait (MAX_WAITING): a
 * newer frame then displaces the oldest waiting one (which goes beside the first instead if an
 * inference host is idle), so when the cores fall behind, frames are dropped evenly instead of
 * queueing, and every stream keeps its place in the shared inference queue. Frames are tracked,
 * judged and reported in their order.
 */
export class TaskPipeline extends EventEmitter<PipelineEvents> {
  private task: PipelineTask;
  private packagesRevision = -1;
  private configDirty = true;
  private readonly apps = new Map<string, AppRuntime>();
  private readonly detectors = new Map<string, TaskDetector>();
  private readonly trackers = new Map<string, { floor: number; tracker: ByteTracker }>();
  private nextTrackId = 1;
  private readonly gate = new MotionGate();
  /** Whether the last frame was gated: the gate's motion model starts over when it is turned back on. */
  private gated = false;
  private size: FrameSize | null = null;
  private inAnalysis = 0;
  /** Frames passed through without a model and not reported yet. */
  private passing = 0;
  /** The chain that tracks, judges and reports analysed frames one after another. */
  private reporting: Promise<void> = Promise.resolve();
  /** Frames waiting for the analysis, oldest first. */
  private readonly waiting: Waiting[] = [];
  private frameCount = 0;
  /** Share of a frame owed to the analysis by the rate limit: a frame is analysed when it reaches 1. */
  private rateCredit = 1;
  private stopped = false;
  private publishing: Promise<void> = Promise.resolve();
  private pendingPublishes = 0;
  /** What the rules measure durations by: frames are judged in order, so it sees them in order. */
  private readonly ruleClock: RuleClock;

  readonly stats = {
    analysed: 0,
    dropped: 0,
    blackFrames: 0,
    events: 0,
    failures: 0,
    lastError: '',
    inferenceMs: 0,
    analysedAt: [] as number[],
    /** The rule clock's breaks (rule-clock.ts) and when the last was seen, ms since the epoch. */
    clockBreaks: 0,
    lastClockBreakAt: null as number | null,
  };

  constructor(
    task: PipelineTask,
    private readonly stream: AnalysisStream,
    private readonly deps: PipelineDeps,
  ) {
    super();
    this.task = task;
    this.ruleClock = new RuleClock(deps.now);
    stream.on('frame', (frame) => this.onFrame(frame));
  }

  update(task: PipelineTask): void {
    this.task = task;
    this.configDirty = true;
  }

  stop(): void {
    this.stopped = true;
    for (const waiting of this.waiting.splice(0)) waiting.frame.release?.();
  }

  /** The motion gate's figures: its decisions and what they spared the detector. */
  gateHealth(at = performance.now()): GateHealth {
    return this.gate.health(this.gated, at);
  }

  /** Frames analysed per second over the last few seconds. */
  analysedFps(at = performance.now()): number {
    const recent = this.stats.analysedAt.filter((t) => at - t <= RATE_WINDOW_MS);
    return recent.length / (RATE_WINDOW_MS / 1000);
  }

  private onFrame(frame: WatchdogFrame): void {
    if (this.stopped) return;
    this.frameCount += 1;
    if (frame.synthetic) this.stats.blackFrames += 1;
    if (!this.dueForAnalysis()) {
      frame.release?.();
      return;
    }
    const numbered: NumberedFrame = { ...frame, frameId: this.frameCount };
    if (this.inAnalysis === 0) {
      this.start({ frame: numbered });
      return;
    }
    // A resting task decides its frame on arrival: one that needs no model (most of them: nothing
    // moved) needs no inference thread either, so it is not held behind the frame in analysis (a 2 s
    // refresh in a busy queue) and dropped; it is reported in its turn. Its decision sees the tracks
    // as of the last frame reported, which for a resting task are still ones or none. Frames are
    // planned and reported in their order: those waiting start or go first.
    if (this.gated && this.gate.resting && this.passing < MAX_PASSING) {
      for (const waiting of this.waiting.splice(0)) this.startOrDrop(waiting);
      const plan = this.planOrFailure(numbered);
      if (plan instanceof Error || (plan.decision !== null && !needsModel(plan.decision))) {
        this.pass(numbered, plan);
        return;
      }
      this.waiting.push({ frame: numbered, plan });
      return;
    }
    if (this.waiting.length > 0 && this.besideFree()) this.start(this.waiting.shift() as Waiting);
    const room = this.deps.overload?.() ? 1 : MAX_WAITING;
    while (this.waiting.length >= room) this.drop(this.waiting.shift() as Waiting);
    this.waiting.push({ frame: numbered });
  }

  /**
   * Whether a waiting frame may start beside the frame in analysis: only to keep an idle thread busy
   * when a newer frame arrives. Otherwise frames go one at a time: two models running at once slow
   * each other on shared cores, which only adds latency. Not on an overloaded engine: a thread that
   * looks idle there is one the starved cores cannot run anyway.
   */
  private besideFree(): boolean {
    const idle = this.deps.inferenceIdle?.() ?? false;
    return this.inAnalysis < MAX_IN_ANALYSIS && idle && !this.deps.overload?.();
  }

  /** A waiting frame that must make room: started beside the frame in analysis if free, else dropped. */
  private startOrDrop(waiting: Waiting): void {
    if (this.besideFree()) this.start(waiting);
    else this.drop(waiting);
  }

  private drop(waiting: Waiting): void {
    this.stats.dropped += 1;
    // A refresh decided on arrival did not happen: the next frame takes it.
    if (waiting.plan?.decision?.kind === 'full' && waiting.plan.decision.reason === 'refresh')
      this.gate.refreshMissed();
    waiting.frame.release?.();
  }

  /** Starts the frame's detection now and queues its report behind the frames before it. */
  private start({ frame: input, plan }: Waiting): void {
    this.inAnalysis += 1;
    this.queueReport(input, this.detectPlanned(input, plan ?? this.planOrFailure(input)), () => {
      this.inAnalysis -= 1;
      if (this.waiting.length > 0 && !this.stopped && this.inAnalysis === 0)
        this.start(this.waiting.shift() as Waiting);
    });
  }

  /**
   * A frame that needs no model: its report is queued behind the frames before it, holding no
   * inference thread. A skipped frame's pixels are done with once the motion stage saw them: its
   * buffer goes back at once, so frames waiting to be counted hold no memory.
   */
  private pass(frame: NumberedFrame, plan: Plan | Error): void {
    this.passing += 1;
    let input = frame;
    if (!(plan instanceof Error) && plan.decision?.kind === 'skip') {
      frame.release?.();
      input = { ...frame, release: undefined };
    }
    this.queueReport(input, this.detectPlanned(input, plan), () => {
      this.passing -= 1;
    });
  }

  private queueReport(input: NumberedFrame, detected: Promise<Detected>, done: () => void): void {
    // report() takes the outcome up only after the frames before it: a failure must not count as unhandled meanwhile.
    detected.catch(() => undefined);
    this.reporting = this.reporting.then(() => this.report(input, detected)).finally(done);
  }

  /** Takes the task's analysis_fps of a faster stream's frames, evenly by their order (so by source time). */
  private dueForAnalysis(): boolean {
    const limit = this.task.analysis_fps;
    const fps = this.stream.info?.fps;
    if (!fps || fps <= limit) {
      this.rateCredit = 1;
      return true;
    }
    this.rateCredit += limit / fps;
    if (this.rateCredit < 1) return false;
    this.rateCredit -= 1;
    return true;
  }

  /**
   * Takes the frame's start, in frame order: config changes apply here before its first model runs,
   * the rule clock reads it, and the gate decides what its detector sees.
   */
  private plan(input: NumberedFrame): Plan {
    const task = this.task;
    this.refresh(input.source);
    // Frames start in their order, as the rule clock needs; the gate times its refresh and rest by it
    // too, so a file played slower or faster than real time is gated as its media runs.
    const mediaMs = this.ruleClock.at(input);
    // Black fill frames age the tracks without running a model on them.
    return { task, mediaMs, decision: input.synthetic ? null : this.decide(input, mediaMs) };
  }

  /**
   * The frame's plan, or why it could not be made (a model that cannot be created, a frame short of
   * its bytes): the frame then fails in its turn, counted, and the next one is tried afresh.
   */
  private planOrFailure(input: NumberedFrame): Plan | Error {
    try {
      return this.plan(input);
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  private detectPlanned(input: NumberedFrame, plan: Plan | Error): Promise<Detected> {
    return plan instanceof Error ? Promise.reject(plan) : this.detect(input, plan);
  }

  /** Runs the frame's models as planned. */
  private async detect(input: NumberedFrame, { task, mediaMs, decision }: Plan): Promise<Detected> {
    const detections = new Map<string, Detection[]>();
    let frame: Frame = input;
    if (decision === null) return { task, frame, detections, mediaMs, gate: null };
    const frameArea = input.width * input.height;
    if (decision.kind === 'skip') {
      this.gate.record('skip', 0, 0, input.receivedAt);
      return { task, frame, detections, mediaMs, gate: decision };
    }
    let runs = 0;
    for (const [key, detector] of this.detectors) {
      if (decision.kind === 'regions' && detector.regions) {
        const tiles = planTiles(decision.regions, detector.regions.input);
        if (tiles.length === 0) {
          detections.set(key, []);
          continue;
        }
        const result = await detectTiles(detector, input, tiles, input.receivedAt);
        runs += tiles.length;
        this.stats.inferenceMs = result.inferenceMs;
        detections.set(key, detectionsInSource(result.detections, input, input.source));
        continue;
      }
      const result = await detector.detect(frame, input.receivedAt);
      frame = result.frame;
      runs += 1;
      this.stats.inferenceMs = result.inferenceMs;
      detections.set(key, detectionsInSource(result.detections, frame, input.source));
    }
    const seen =
      decision.kind === 'regions'
        ? Math.min(1, decision.regions.reduce((sum, r) => sum + area(r), 0) / frameArea)
        : 1;
    this.gate.record(decision.kind, runs, seen, input.receivedAt);
    return { task, frame, detections, mediaMs, gate: decision.kind === 'regions' ? decision : null };
  }

  /**
   * The motion gate's decision for the frame, when the task has it on and every model of it can run
   * on crops (a weight-free motion model cannot); else the whole frame, as without the gate.
   */
  private decide(input: NumberedFrame, mediaMs: number): GateDecision {
    const detectors = [...this.detectors.values()];
    const cropInput = detectors[0]?.regions?.input;
    const gated = this.task.motion_gate && cropInput !== undefined && detectors.every((d) => d.regions);
    if (gated && !this.gated) this.gate.restart();
    this.gated = gated;
    if (!gated) return { kind: 'full', reason: 'off' };
    const tracks: LiveTrack[] = [];
    for (const { tracker } of this.trackers.values()) {
      for (const { trackId, box, lost } of tracker.liveBoxes())
        tracks.push({ trackId, box: boxInFrame(box, input, input.source), lost });
    }
    // Tasks run one model as a rule; with several, regions are planned for the first one's input size.
    return this.gate.decide(input, tracks, cropInput, mediaMs, this.task.gate_regions);
  }

  /**
   * Tracks, judges and reports a detected frame, then gives its buffer back once nothing (a snapshot
   * being drawn) needs it. A failed frame is counted and shown in dump; the next one is tried afresh.
   */
  private async report(input: NumberedFrame, detected: Promise<Detected>): Promise<void> {
    let publishing = false;
    try {
      publishing = await this.judge(input, await detected);
    } catch (error) {
      if (!this.stopped) {
        this.stats.failures += 1;
        this.stats.lastError = (error as Error).message;
        this.emit('failed', this.stats.lastError);
      }
    } finally {
      if (!publishing) input.release?.();
    }
  }

  /** True when snapshots of the frame are being drawn: the publishing chain releases it then. */
  private async judge(
    input: NumberedFrame,
    { task, frame, detections, mediaMs, gate }: Detected,
  ): Promise<boolean> {
    if (this.stopped) return false;
    if (gate?.kind === 'skip') {
      // Looked at by the motion stage, so counted; nothing to track or judge, and nothing new to draw:
      // the AI video and heat grid keep the last analysed frame, which held no object (the task rests).
      this.countAnalysed();
      return false;
    }
    const size = input.source;
    const covered = gate ? this.coveredBy(gate.regions, input) : undefined;
    // The event's time is when its frame left ffmpeg, not when analysis got round to it; rules time
    // frames by the rule clock (rule-clock.ts), which never goes back.
    const timestamp = Math.round(this.deps.now() - (performance.now() - input.receivedAt));
    const models: AnalysedFrame['models'] = new Map();
    for (const key of this.detectors.keys()) {
      const found = detections.get(key);
      // A model added after this frame started has nothing of it to track.
      if (!found && !input.synthetic) continue;
      models.set(key, { detections: found ?? [], tracked: this.tracker(key).update(found ?? [], covered) });
    }

    const info = { id: input.frameId, timestampMs: timestamp, width: size.width, height: size.height };
    const ruleInfo = { ...info, mediaMs };
    if (this.ruleClock.breaks !== this.stats.clockBreaks) {
      this.stats.clockBreaks = this.ruleClock.breaks;
      this.stats.lastClockBreakAt = timestamp;
      this.emit('clockBreak', timestamp);
    }
    const overlays: AppOverlay[] = [];
    const results: AnalysedFrame['results'] = [];
    const fired: Array<{ runtime: AppRuntime; result: RuleResult }> = [];
    for (const runtime of this.apps.values()) {
      const modelKey = runtime.app.model.key;
      const picture = input.synthetic ? undefined : frame;
      const result = runtime.state.evaluate(ruleInfo, models.get(modelKey)?.tracked ?? [], picture);
      results.push({ appId: runtime.app.app_id, modelKey, result, areas: runtime.areas });
      overlays.push({
        appId: runtime.app.app_id,
        appName: runtime.app.name,
        zone: {
          points: runtime.polygon,
          color: runtime.color,
          ...(runtime.areas.line_direction && { direction: runtime.areas.line_direction }),
        },
        areas: areaZones(runtime.areas, runtime.color),
        objects: [...result.shown, ...result.removed],
      });
      if (result.firings.length > 0) fired.push({ runtime, result });
    }
    this.countAnalysed();
    this.emit('analysed', {
      frameId: input.frameId,
      timestampMs: timestamp,
      shownAt: frameTime(input),
      size,
      frameSize: { width: input.width, height: input.height },
      frame: input.synthetic ? null : frame,
      models,
      results,
      overlays,
    });

    if (fired.length === 0) return false;
    // Snapshots are drawn and stored while the next frame is analysed, in frame order. More than
    // two waiting means drawing is the bottleneck: analysis then waits instead of holding frames.
    this.pendingPublishes += 1;
    this.publishing = this.publishing
      .then(() => this.publish(task, frame, info, fired, overlays))
      .catch((error: Error) => {
        this.stats.failures += 1;
        this.stats.lastError = error.message;
        this.emit('failed', error.message);
      })
      .finally(() => {
        this.pendingPublishes -= 1;
        input.release?.();
      });
    if (this.pendingPublishes > 2) await this.publishing;
    return true;
  }

  private countAnalysed(): void {
    this.stats.analysed += 1;
    this.stats.analysedAt.push(performance.now());
    if (this.stats.analysedAt.length > 256) this.stats.analysedAt.splice(0, 128);
  }

  /** Whether a track's box (source pixels) had its centre on a region the detector looked at. */
  private coveredBy(regions: readonly Box[], frame: NumberedFrame): (box: Box) => boolean {
    return (box) => {
      const { x1, y1, x2, y2 } = boxInFrame(box, frame, frame.source);
      const cx = (x1 + x2) / 2;
      const cy = (y1 + y2) / 2;
      return regions.some((r) => cx >= r.x1 && cx < r.x2 && cy >= r.y1 && cy < r.y2);
    };
  }

  /** One event per app that fired, each with its own annotated snapshot, into the outbox. */
  private async publish(
    task: PipelineTask,
    frame: Frame,
    info: FrameInfo,
    fired: Array<{ runtime: AppRuntime; result: RuleResult }>,
    overlays: AppOverlay[],
  ): Promise<void> {
    for (const { runtime, result } of fired) {
      const overlay = overlays.find((o) => o.appId === runtime.app.app_id);
      if (!overlay) continue;
      const zones = [overlay.zone, ...overlay.areas];
      const image = await appSnapshot(frame, task.osd, zones, overlay.objects, info);
      this.deps.sink.enqueue(
        { task_id: task.task_id, report_url: task.report_url, report_secret: task.report_secret },
        messageEvent({
          task,
          appId: runtime.app.app_id,
          timestamp: info.timestampMs,
          frame: info,
          firings: result.firings,
          image,
        }),
      );
      this.stats.events += 1;
    }
  }

  private tracker(modelKey: string): ByteTracker {
    const floor = this.scoreFloor(modelKey);
    let entry = this.trackers.get(modelKey);
    // Detections an app accepts must be able to start a track, so a lowered threshold rebuilds the tracker.
    if (!entry || entry.floor !== floor) {
      const options = { highThreshold: Math.min(0.5, floor), newTrackThreshold: Math.min(0.6, floor) };
      entry = { floor, tracker: new ByteTracker(options, () => String(this.nextTrackId++)) };
      this.trackers.set(modelKey, entry);
    }
    return entry.tracker;
  }

  /** The lowest class threshold among the task's apps on a model. */
  private scoreFloor(modelKey: string): number {
    let floor = 1;
    for (const runtime of this.apps.values()) {
      if (runtime.app.model.key !== modelKey) continue;
      for (const entry of runtime.app.rule.classes ?? []) floor = Math.min(floor, entry.threshold);
    }
    return floor;
  }

  /** Each app's counting-line crossings since analysis started and its zones' occupancy now. */
  counts(): Map<string, AppCounts> {
    return new Map([...this.apps].map(([appId, runtime]) => [appId, runtime.state.counts()]));
  }

  /** Applies task updates, rule edits and a new frame size before the next frame is analysed. */
  private refresh(size: FrameSize): void {
    const resized = !this.size || this.size.width !== size.width || this.size.height !== size.height;
    this.size = size;
    if (!this.configDirty && this.packagesRevision === this.deps.packages.revision) {
      if (resized) for (const runtime of this.apps.values()) runtime.resize(size);
      return;
    }
    this.configDirty = false;
    this.packagesRevision = this.deps.packages.revision;
    const wanted = new Set(this.task.app_ids);
    for (const appId of this.apps.keys()) if (!wanted.has(appId)) this.apps.delete(appId);
    for (const appId of this.task.app_ids) {
      const shared = this.deps.packages.app(this.task.zapk_id, appId);
      // The app's rule as it is now (a rule edit moves the revision) under this camera's override.
      const app = { ...shared, rule: layRule(shared.rule, this.task.rule_overrides[appId]) };
      const areas = this.task.app_configs.find((c) => c.app_id === appId) ?? { polygon: [] };
      const runtime = this.apps.get(appId);
      if (runtime) runtime.reconfigure(app, areas, this.task.polygon_frame, size);
      else this.apps.set(appId, new AppRuntime(app, areas, this.task.polygon_frame, size));
    }
    const models = new Map([...this.apps.values()].map((r) => [r.app.model.key, r.app]));
    for (const key of this.detectors.keys()) {
      if (!models.has(key)) {
        this.detectors.delete(key);
        this.trackers.delete(key);
      }
    }
    for (const [key, app] of models) {
      if (!this.detectors.has(key)) this.detectors.set(key, this.deps.createDetector(app));
    }
  }
}
