import type { InstalledApp } from '../packages/registry';
import type { AnalysedFrame } from '../pipeline/task-pipeline';
import { AppRuleState } from '../rules/evaluate';
import type { ClassEntry } from '../rules/schema';
import { masked } from '../rules/zones';
import type { AppAreas } from '../tasks/schema';
import { pointInPolygon, toPoints } from '../vision/geometry';
import type { Detection, Frame, FrameSize, Point, TrackedObject } from '../vision/types';
import { OPTIMIZATION_LIMITS } from './limits';
import type { Annotation, SampleReason } from './schema';
import { addTo, cloneStats, type RunStats } from './stats';
import { type Judged, TrackBook } from './track-book';

/** A hard sample on its way to the store: the source frame and the app's detections on it. */
export interface SampleCandidate {
  appId: string;
  frame: Frame;
  frameId: number;
  timestampMs: number;
  reasons: SampleReason[];
  annotations: Annotation[];
}

export interface CollectorDeps {
  zapkId: string;
  appIds: readonly string[];
  packages: { readonly revision: number; app(zapkId: string, appId: string): InstalledApp };
  /** Takes a sample; the taker decides whether it still has room for it. */
  offer(candidate: SampleCandidate): void;
}

/** One app of the run, as its rule is now. */
interface RunApp {
  app: InstalledApp;
  classes: Map<string, ClassEntry>;
  /** The app's counter judged every frame (interval 0), to see when the rule switches on or off. */
  shadow: AppRuleState | null;
  shadowAreas: AppAreas | null;
  holds: boolean | undefined;
  lastSampleMs: Map<SampleReason, number>;
}

/** A recent frame whose samples may still gain a reason (a track seen on it vanishing later). */
interface Pending {
  frame: AnalysedFrame;
  seq: number;
  /** Per app: why the frame is a hard sample, and which detections (indices into the model's list) made it. */
  picks: Map<string, { reasons: Set<SampleReason>; hard: Set<number> }>;
}

const sameBox = (a: Detection, b: { x1: number; y1: number; x2: number; y2: number }) =>
  a.x1 === b.x1 && a.y1 === b.y1 && a.x2 === b.x2 && a.y2 === b.y2;

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Picks hard samples out of a task's analysed frames for the apps of one run, and keeps the score
 * statistics the threshold proposals come from. Runs inside the pipeline's frame event, so it only
 * looks and counts; the frames it picks are handed on by reference (nothing is copied or encoded
 * here). A frame is held back for a few frames, so that a track seen on it that vanishes right after
 * adds its reason to the same sample.
 */
export class Collector {
  readonly stats: RunStats;
  frames: number;
  private seq = 0;
  private revision = -1;
  private apps: RunApp[] = [];
  private readonly books = new Map<string, TrackBook>();
  private readonly ring: Pending[] = [];

  constructor(
    private readonly deps: CollectorDeps,
    stats: RunStats = {},
    frames = 0,
  ) {
    this.stats = stats;
    this.frames = frames;
  }

  onFrame(frame: AnalysedFrame): void {
    // Black fill frames (stream lost) show nothing to learn from.
    if (frame.frame === null) return;
    this.refreshApps();
    this.seq += 1;
    this.frames += 1;
    // The pipeline reuses the pixel buffer once this call returns; the window keeps its own copy.
    const { data, width, height } = frame.frame;
    const pixels = { data: data.slice(), width, height };
    const pending: Pending = { frame: { ...frame, frame: pixels }, seq: this.seq, picks: new Map() };
    for (const [modelKey, book] of this.booksOfFrame(frame)) {
      const model = frame.models.get(modelKey);
      if (!model) continue;
      const { vanished, finished } = book.observe(this.seq, model.tracked);
      this.fold(this.stats, modelKey, finished);
      for (const track of vanished) {
        const at = this.ring.find((p) => p.seq === track.lastSeq);
        const detections = at?.frame.models.get(modelKey)?.detections ?? [];
        const index = detections.findIndex((d) => d.classIndex === track.classIndex && sameBox(d, track.box));
        if (!at || index < 0) continue;
        for (const app of this.appsOn(modelKey)) {
          if (this.entryFor(app, at.frame, detections[index] as Detection))
            this.pick(at, app.app.app_id, 'flicker', [index]);
        }
      }
    }
    for (const app of this.apps) this.inspect(pending, app);
    this.ring.push(pending);
    while (this.ring.length > OPTIMIZATION_LIMITS.vanishFrames + 1) this.emit(this.ring.shift() as Pending);
  }

  /** The statistics as they would be if the run ended now (tracks still followed judged provisionally). */
  snapshot(): RunStats {
    const stats = cloneStats(this.stats);
    for (const [modelKey, book] of this.books) this.fold(stats, modelKey, book.judgeFollowed());
    return stats;
  }

  /** Ends the run: the held frames go out as samples, the tracks still followed are judged. */
  finish(): RunStats {
    for (const pending of this.ring.splice(0)) this.emit(pending);
    for (const [modelKey, book] of this.books) this.fold(this.stats, modelKey, book.judgeFollowed());
    this.books.clear();
    return this.stats;
  }

  private refreshApps(): void {
    if (this.revision === this.deps.packages.revision) return;
    this.revision = this.deps.packages.revision;
    const previous = new Map(this.apps.map((a) => [a.app.app_id, a]));
    this.apps = [];
    for (const appId of this.deps.appIds) {
      let app: InstalledApp;
      try {
        app = this.deps.packages.app(this.deps.zapkId, appId);
      } catch {
        // Uninstalled meanwhile (only possible once its task closed): nothing more to collect for it.
        continue;
      }
      const runApp: RunApp = previous.get(appId) ?? {
        app,
        classes: new Map(),
        shadow: null,
        shadowAreas: null,
        holds: undefined,
        lastSampleMs: new Map(),
      };
      runApp.app = app;
      runApp.classes = new Map((app.rule.classes ?? []).map((entry) => [entry.class_id, entry]));
      if (!app.rule.counter) runApp.shadow = null;
      // The areas are set on the next frame, from that frame's result.
      runApp.shadowAreas = null;
      this.apps.push(runApp);
    }
  }

  private booksOfFrame(frame: AnalysedFrame): Map<string, TrackBook> {
    for (const { modelKey } of frame.results) {
      if (!this.books.has(modelKey) && this.appsOn(modelKey).length > 0)
        this.books.set(modelKey, new TrackBook());
    }
    return this.books;
  }

  private appsOn(modelKey: string): RunApp[] {
    return this.apps.filter((a) => a.app.model.key === modelKey);
  }

  /** Judged tracks of a model go to each app of the run that has their class. */
  private fold(stats: RunStats, modelKey: string, judged: readonly Judged[]): void {
    for (const track of judged) {
      const classId = String(track.classIndex);
      for (const app of this.appsOn(modelKey)) {
        if (app.classes.has(classId)) addTo(stats, app.app.app_id, classId, track.kind, track.score);
      }
    }
  }

  /** The class entry a detection falls under for the app, when it lies in the app's zone and size bounds. */
  private entryFor(app: RunApp, frame: AnalysedFrame, detection: Detection): ClassEntry | undefined {
    const entry = app.classes.get(String(detection.classIndex));
    if (!entry) return undefined;
    const longer = Math.max(detection.x2 - detection.x1, detection.y2 - detection.y1);
    if (longer < entry.min_pixel || (entry.max_pixel > 0 && longer > entry.max_pixel)) return undefined;
    const { polygon, masks = [] } = this.areasOf(app, frame);
    const foot: Point = [(detection.x1 + detection.x2) / 2, detection.y2];
    if (polygon.length >= 3 && !pointInPolygon(foot, toPoints(polygon))) return undefined;
    // Detections in a mask never count for the app, so they are no hard samples of it either.
    if (masked(foot, masks.map(toPoints))) return undefined;
    return entry;
  }

  private areasOf(app: RunApp, frame: AnalysedFrame): AppAreas {
    return frame.results.find((r) => r.appId === app.app.app_id)?.areas ?? { polygon: [] };
  }

  /** Near-threshold detections and counter toggles of one app on the newest frame. */
  private inspect(pending: Pending, app: RunApp): void {
    const { frame } = pending;
    const appId = app.app.app_id;
    const result = frame.results.find((r) => r.appId === appId);
    if (!result) return;
    const model = frame.models.get(result.modelKey);
    const detections = model?.detections ?? [];
    const near: number[] = [];
    detections.forEach((detection, index) => {
      const entry = this.entryFor(app, frame, detection);
      if (!entry) return;
      addTo(this.stats, appId, entry.class_id, 'detections', detection.score);
      if (Math.abs(detection.score - entry.threshold) <= OPTIMIZATION_LIMITS.band) near.push(index);
    });
    if (near.length > 0 && this.due(app, 'near_threshold', frame.timestampMs))
      this.pick(pending, appId, 'near_threshold', near);

    if (!app.app.rule.counter) return;
    const holds = this.counterHolds(app, frame, model?.tracked ?? []);
    if (
      app.holds !== undefined &&
      holds !== app.holds &&
      this.due(app, 'counter_toggle', frame.timestampMs)
    ) {
      // The objects the rule counted on this frame are what the toggle hangs on.
      const counted = new Set(result.result.shown.map((o) => o.track_id));
      const tracks = trackIdsOf(detections, model?.tracked ?? []);
      const hard = tracks.flatMap((trackId, index) =>
        trackId !== null && counted.has(trackId) ? [index] : [],
      );
      this.pick(pending, appId, 'counter_toggle', hard);
    }
    app.holds = holds;
  }

  private counterHolds(app: RunApp, frame: AnalysedFrame, tracked: readonly TrackedObject[]): boolean {
    const appId = app.app.app_id;
    const areas = this.areasOf(app, frame);
    const context = {
      appId,
      appType: app.app.type,
      rule: { ...app.app.rule, interval: 0 },
      ...areas,
    };
    if (!app.shadow) {
      app.shadow = new AppRuleState(context);
      app.shadowAreas = areas;
    } else if (app.shadowAreas !== areas) {
      app.shadow.setContext(context);
      app.shadowAreas = areas;
    }
    const info = { id: frame.frameId, timestampMs: frame.timestampMs, ...frame.size };
    return app.shadow.evaluate(info, tracked).firings.some((f) => f.id === `${appId}:counter`);
  }

  /** True, and the reason's clock restarted, when the app's last sample for it is old enough. */
  private due(app: RunApp, reason: SampleReason, timestampMs: number): boolean {
    const last = app.lastSampleMs.get(reason);
    const due =
      last === undefined || timestampMs < last || timestampMs - last >= OPTIMIZATION_LIMITS.spacingMs;
    if (due) app.lastSampleMs.set(reason, timestampMs);
    return due;
  }

  private pick(pending: Pending, appId: string, reason: SampleReason, hard: readonly number[]): void {
    let picked = pending.picks.get(appId);
    if (!picked) {
      picked = { reasons: new Set(), hard: new Set() };
      pending.picks.set(appId, picked);
    }
    picked.reasons.add(reason);
    for (const index of hard) picked.hard.add(index);
  }

  /** A frame leaves the window: each app that picked it gets a sample with its classes' detections. */
  private emit(pending: Pending): void {
    const { frame } = pending;
    for (const [appId, picked] of pending.picks) {
      const app = this.apps.find((a) => a.app.app_id === appId);
      const result = frame.results.find((r) => r.appId === appId);
      const pixels = frame.frame;
      if (!app || !result || !pixels) continue;
      const model = frame.models.get(result.modelKey);
      const detections = model?.detections ?? [];
      const tracks = trackIdsOf(detections, model?.tracked ?? []);
      const annotations: Annotation[] = [];
      detections.forEach((detection, index) => {
        const classId = String(detection.classIndex);
        if (!app.classes.has(classId)) return;
        const { width, height } = pixels;
        const bbox = clampedBox(onPixels(detection, frame.size, pixels), width, height);
        if (!bbox) return;
        annotations.push({
          class_id: classId,
          label: app.app.labels[detection.classIndex] ?? classId,
          score: round(detection.score, 4),
          bbox,
          track_id: tracks[index] ?? null,
          hard: picked.hard.has(index),
          verdict: 'none',
        });
      });
      this.deps.offer({
        appId,
        frame: pixels,
        frameId: frame.frameId,
        timestampMs: frame.timestampMs,
        reasons: [...picked.reasons],
        annotations,
      });
    }
  }
}

/** The track id of each detection (trackers copy the box of the detection they take), or null. */
function trackIdsOf(detections: readonly Detection[], tracked: readonly TrackedObject[]): (string | null)[] {
  return detections.map(
    (d) => tracked.find((t) => t.classIndex === d.classIndex && sameBox(d, t))?.trackId ?? null,
  );
}

/**
 * A box in the source's pixels placed on the sample's picture, the decoded frame: a dataset's boxes
 * are in its images' pixels, and the frame may be scaled down from the source for analysis.
 */
function onPixels(box: Detection, source: FrameSize, pixels: FrameSize): Detection {
  const sx = pixels.width / source.width;
  const sy = pixels.height / source.height;
  return { ...box, x1: box.x1 * sx, y1: box.y1 * sy, x2: box.x2 * sx, y2: box.y2 * sy };
}

/** [x, y, w, h] inside the frame, to 0.01 px; null when nothing of the box is inside. */
function clampedBox(box: Detection, width: number, height: number): [number, number, number, number] | null {
  const x1 = Math.max(0, Math.min(width, box.x1));
  const y1 = Math.max(0, Math.min(height, box.y1));
  const x2 = Math.max(0, Math.min(width, box.x2));
  const y2 = Math.max(0, Math.min(height, box.y2));
  if (x2 - x1 <= 0 || y2 - y1 <= 0) return null;
  return [round(x1, 2), round(y1, 2), round(x2 - x1, 2), round(y2 - y1, 2)];
}
