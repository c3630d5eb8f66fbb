import { type ChangeMapRunner, modelChanges } from '../change/change-model';
import { ChangeThread } from '../change/change-thread';
import { type ChangedRegion, changeImage } from '../change/detect';
import { NotRegisteredError } from '../change/register';
import type { WorkingImage } from '../change/working';
import type { Clock } from '../clock';
import { messageEvent } from '../events/message';
import type { FiredRule, ImageResult, NewEvent } from '../events/schema';
import { isChangeModelFamily, isOnnxFamily } from '../inference/families';
import { areaZones } from '../osd/overlay';
import { appSnapshot } from '../osd/snapshot';
import type { InstalledApp, InstalledModel, PackageRegistry } from '../packages/registry';
import { zoneColor } from '../pipeline/app-runtime';
import type { TaskDetector } from '../pipeline/detectors';
import type { DeliveryTarget } from '../pipeline/task-pipeline';
import { type AppRuleContext, AppRuleState } from '../rules/evaluate';
import type { TaskRegistry } from '../tasks/registry';
import { type AppAreas, DEFAULT_OSD, type TaskView } from '../tasks/schema';
import type { Detection, Frame, TrackedObject } from '../vision/types';
import { type DecodeOptions, decodeImage, type EncodedImage } from './decode';
import { imageError } from './image-error';
import { UploadGate } from './upload-gate';

export interface ImageAnalysisDeps {
  tasks: TaskRegistry;
  packages: PackageRegistry;
  outbox: { enqueue(target: DeliveryTarget, event: NewEvent): unknown };
  /** The task clock: event timestamps and rule intervals. */
  clock: Clock;
  /** ONNX detection models, run in the shared inference pool. */
  createDetector(model: InstalledModel): TaskDetector;
  /** ONNX change models' tile pairs, run in the shared inference pool. */
  changeMap: ChangeMapRunner;
  /** The task's callback signing secret, which the task view does not show. */
  secretOf(taskId: string): string | undefined;
}

/** The query of an upload, echoed into its results. */
export interface UploadInfo {
  image_id?: number;
  device_id?: string;
}

/** What an image or diff task keeps between uploads, in memory only. */
interface TaskState {
  /** Admitted images so far: the image_id of one sent without. */
  images: number;
  /**
   * Image task: the previous image (the reference of motion apps). Diff task: the previous image_b.
   * Kept on the comparison's working grid, not as the frame: a few MB, however large the upload.
   */
  previous: WorkingImage | null;
  /** Diff task with an ONNX change model: the previous image_b itself, which such a model compares. */
  previousFrame: Frame | null;
  rules: Map<string, AppRuleState>;
  /** Analyses of one task run one after the other, in the order their images were admitted. */
  queue: Promise<unknown>;
}

/**
 * Image and diff tasks (4.8, 4.9): each admitted image is analysed at once by the task's apps and
 * answered with the rules that fired; the same result goes to the outbox, one event per app. There
 * is no tracker across images: each object of an image is its own, numbered from "1". Uploads are
 * decoded here, through the gate: refusals that need no pixels first, then within the decode budget.
 */
export class ImageAnalysis {
  private readonly states = new Map<string, TaskState>();
  private readonly detectors = new Map<string, TaskDetector>();
  private readonly gate: UploadGate;

  constructor(private readonly deps: ImageAnalysisDeps) {
    deps.tasks.on('closed', (view) => this.states.delete(view.task_id));
    this.gate = new UploadGate(deps.tasks);
  }

  /** 4.8: one image. Motion apps compare it with the task's previous image (none on the first). */
  async analyseImage(
    taskId: string,
    encoded: EncodedImage,
    upload: UploadInfo,
    options: DecodeOptions,
  ): Promise<ImageResult> {
    const task = this.deps.tasks.liveTask(taskId, 'image');
    const apps = this.appsOf(
      task,
      (app) => isOnnxFamily(app.model.spec.family) || app.model.spec.family === 'motion',
    );
    return this.gate.run(taskId, 'image', pixelsOf(encoded), async (admitted) => {
      const image = await decodeImage(encoded, options);
      const state = this.stateOf(taskId);
      this.deps.tasks.admitImage(taskId, 'image');
      admitted();
      const previous = state.previous;
      // Taken before the ONNX pool takes the pixels over; it is the next image's reference too.
      const current = apps.some((app) => app.model.spec.family === 'motion') ? changeImage(image) : null;
      if (current) state.previous = current;
      const imageId = this.nextImageId(state, upload);
      return this.serially(state, async () => {
        let frame = image;
        const detections = new Map<string, Detection[]>();
        for (const app of apps) {
          const { key, spec } = app.model;
          if (detections.has(key)) continue;
          if (spec.family === 'motion') {
            detections.set(
              key,
              previous && current && sameSize(previous, current)
                ? await changesAbove(previous, current, spec.score_threshold)
                : [],
            );
          } else {
            const result = await this.detector(app.model).detect(frame);
            frame = result.frame;
            detections.set(key, result.detections);
          }
        }
        return this.report(task, state, apps, frame, imageId, upload, detections);
      });
    });
  }

  /**
   * 4.9: a pair, or image_b alone against the task's previous image_b. Regions are in image_b's
   * pixels. The built-in change family compares working grids (engine/change/detect.ts); an ONNX
   * change model compares image_b with image_a registered and warped onto it, tile by tile.
   */
  async analysePair(
    taskId: string,
    encodedBefore: EncodedImage | null,
    encodedAfter: EncodedImage,
    upload: UploadInfo,
    options: DecodeOptions,
  ): Promise<ImageResult> {
    const task = this.deps.tasks.liveTask(taskId, 'diff');
    const apps = this.appsOf(
      task,
      (app) => app.model.spec.family === 'change' || isChangeModelFamily(app.model.spec.family),
    );
    const builtin = apps.some((app) => app.model.spec.family === 'change');
    const models = [
      ...new Map(
        apps
          .filter((app) => isChangeModelFamily(app.model.spec.family))
          .map((app) => [app.model.key, app.model]),
      ).values(),
    ];
    const pixels = pixelsOf(encodedAfter) + (encodedBefore ? pixelsOf(encodedBefore) : 0);
    return this.gate.run(taskId, 'diff', pixels, async (admitted) => {
      const [before, after] = await decodePair(encodedBefore, encodedAfter, options);
      const state = this.stateOf(taskId);
      const reference = before ? changeImage(before) : state.previous;
      const referenceFrame = before ?? state.previousFrame;
      if (!reference || (models.length > 0 && !referenceFrame)) {
        throw imageError(
          'image.no_reference',
          'body.image_a: is required: the task has no earlier image_b to compare image_b with',
          'body.image_a',
        );
      }
      this.deps.tasks.admitImage(taskId, 'diff');
      admitted();
      const current = changeImage(after);
      state.previous = current;
      state.previousFrame = models.length > 0 ? after : null;
      const imageId = this.nextImageId(state, upload);
      return this.serially(state, async () => {
        const detections = new Map<string, Detection[]>();
        const above = (regions: ChangedRegion[], floor: number) => regions.filter((r) => r.score >= floor);
        if (builtin) {
          // One algorithm for every weight-free change model: run it once, filter per model.
          const regions = await registered(changeThread.detect(reference, current));
          for (const app of apps)
            if (app.model.spec.family === 'change')
              detections.set(app.model.key, above(regions, app.model.spec.score_threshold));
        }
        if (models.length > 0 && referenceFrame) {
          const aligned = await registered(changeThread.align(referenceFrame, after));
          for (const model of models) {
            if (!model.file) throw new Error(`model ${model.key} has no weights file`);
            const ref = { key: model.key, name: model.name, file: model.file, spec: model.spec };
            const regions = await modelChanges(this.deps.changeMap, ref, after, aligned);
            detections.set(model.key, above(regions, model.spec.score_threshold));
          }
        }
        return this.report(task, state, apps, after, imageId, upload, detections);
      });
    });
  }

  /** Rules of each app on its model's detections; fired rules get a snapshot and go to the outbox. */
  private async report(
    task: TaskView,
    state: TaskState,
    apps: readonly InstalledApp[],
    frame: Frame,
    imageId: number,
    upload: UploadInfo,
    detections: ReadonlyMap<string, Detection[]>,
  ): Promise<ImageResult> {
    const timestamp = this.deps.clock.now();
    const info = { id: imageId, timestampMs: timestamp, width: frame.width, height: frame.height };
    const osd = { ...DEFAULT_OSD, ...task.osd };
    const echo = {
      image_id: imageId,
      ...(upload.device_id !== undefined && { device_id: upload.device_id }),
    };
    const rules: FiredRule[] = [];
    for (const app of apps) {
      const areas = task.app_configs.find((c) => c.app_id === app.app_id) ?? { polygon: [] };
      const polygon = areas.polygon;
      const result = this.ruleState(state, app, areas).evaluate(
        info,
        asObjects(detections.get(app.model.key) ?? []),
      );
      if (result.firings.length === 0) continue;
      const zone = { points: polygon, color: zoneColor(app) };
      const image = await appSnapshot(frame, osd, [zone, ...areaZones(areas, zone.color)], result.shown);
      const event = messageEvent({
        task,
        appId: app.app_id,
        timestamp,
        frame: info,
        firings: result.firings,
        image,
        upload: echo,
      });
      rules.push(...event.data.rules);
      // A task closed while its image was analysed gets no more events (task_closed was its last).
      if (this.states.get(task.task_id) === state) {
        this.deps.outbox.enqueue(
          {
            task_id: task.task_id,
            report_url: task.report_url,
            report_secret: this.deps.secretOf(task.task_id),
          },
          event,
        );
      }
    }
    return { ...echo, frame: { height: frame.height, width: frame.width, id: imageId }, rules };
  }

  /** The task's apps, refused with 422 when one has a model this kind of upload cannot run. */
  private appsOf(task: TaskView, runs: (app: InstalledApp) => boolean): InstalledApp[] {
    return task.app_ids.map((appId) => {
      const app = this.deps.packages.app(task.zapk_id, appId);
      if (!runs(app)) {
        throw imageError(
          'image.model_not_supported',
          `application "${appId}" uses the model family "${app.model.spec.family}", which ${task.mode} tasks cannot run in this build` +
            (task.mode === 'diff'
              ? ' (change detection needs the built-in "change" family or a "siamese-change" model)'
              : ''),
        );
      }
      return app;
    });
  }

  /** The app's rule state with the current rule and areas; counters and interval timers carry over. */
  private ruleState(state: TaskState, app: InstalledApp, areas: AppAreas): AppRuleState {
    const { polygon, zones, masks } = areas;
    const context: AppRuleContext = {
      appId: app.app_id,
      appType: app.type,
      rule: app.rule,
      polygon,
      ...(zones && { zones }),
      ...(masks && { masks }),
      perImage: true,
    };
    let rules = state.rules.get(app.app_id);
    if (rules) rules.setContext(context);
    else {
      rules = new AppRuleState(context);
      state.rules.set(app.app_id, rules);
    }
    return rules;
  }

  private stateOf(taskId: string): TaskState {
    let state = this.states.get(taskId);
    if (!state) {
      state = { images: 0, previous: null, previousFrame: null, rules: new Map(), queue: Promise.resolve() };
      this.states.set(taskId, state);
    }
    return state;
  }

  private nextImageId(state: TaskState, upload: UploadInfo): number {
    state.images += 1;
    return upload.image_id ?? state.images;
  }

  private serially<T>(state: TaskState, run: () => Promise<T>): Promise<T> {
    const result = state.queue.then(run);
    state.queue = result.catch(() => undefined);
    return result;
  }

  private detector(model: InstalledModel): TaskDetector {
    let detector = this.detectors.get(model.key);
    if (!detector) {
      detector = this.deps.createDetector(model);
      this.detectors.set(model.key, detector);
    }
    return detector;
  }
}

const sameSize = (a: Frame | WorkingImage, b: Frame | WorkingImage) =>
  a.width === b.width && a.height === b.height;

const pixelsOf = (image: EncodedImage) => image.width * image.height;

/** Decoded side by side; a problem with image_a is reported before one with image_b. */
async function decodePair(
  before: EncodedImage | null,
  after: EncodedImage,
  options: DecodeOptions,
): Promise<[Frame | null, Frame]> {
  const [a, b] = await Promise.allSettled([
    before ? decodeImage(before, options) : null,
    decodeImage(after, options),
  ]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}

/** The registration, tone matching and change map of every pair, off the event loop. */
const changeThread = new ChangeThread();

/** A comparison whose images cannot be registered is refused with 42208. */
function registered<T>(comparison: Promise<T>): Promise<T> {
  return comparison.catch((error: unknown) => {
    if (!(error instanceof NotRegisteredError)) throw error;
    throw imageError('image.not_registered', `body.image_b: ${error.message}`, 'body.image_b');
  });
}

/** Motion between two images of one camera; two that cannot be registered show no motion. */
async function changesAbove(
  reference: WorkingImage,
  current: WorkingImage,
  floor: number,
): Promise<Detection[]> {
  try {
    return (await changeThread.detect(reference, current)).filter((region) => region.score >= floor);
  } catch (error) {
    if (error instanceof NotRegisteredError) return [];
    throw error;
  }
}

/** Each detection of an image is an object of its own, numbered in the image from "1". */
function asObjects(detections: readonly Detection[]): TrackedObject[] {
  return detections.map((d, i) => ({ ...d, trackId: String(i + 1), hits: 1, confirmed: true }));
}
