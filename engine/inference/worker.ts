import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { classCount, decodeOutput } from './decode';
import { isOnnxFamily, type OnnxFamily } from './families';
import { letterbox } from './letterbox';
import { postprocess } from './nms';
import type {
  CheckReply,
  CheckRequest,
  DetectReply,
  DetectRequest,
  OnnxModelRef,
  WorkerMessage,
  WorkerOptions,
} from './protocol';

/**
 * One inference thread: owns an onnxruntime session per model it has been asked to run and does the
 * whole per-frame job (letterbox, run, decode, NMS) so the engine's main thread only routes frames.
 */

const options = workerData as WorkerOptions;
const port = parentPort;
if (!port) throw new Error('the inference worker must run in a worker thread');

interface LoadedModel {
  session: ort.InferenceSession;
  inputName: string;
  outputName: string;
  /** Reused between frames: the tensor is the same size for every frame of a model. */
  tensor: Float32Array;
}

const models = new Map<string, Promise<LoadedModel>>();

// Every run hands its output back in a fresh external buffer (about 1 MB), and this thread's small
// heap is collected so rarely that tens of MB of spent outputs pile up per thread. A young-generation
// collection every few frames (0.3 ms) frees them.
const COLLECT_EVERY = 8;
setFlagsFromString('--expose-gc');
const collectYoung = runInNewContext('gc') as (options: { type: 'minor' }) => void;
let runsSinceCollect = 0;

async function open(model: OnnxModelRef): Promise<LoadedModel> {
  const session = await ort.InferenceSession.create(model.file, {
    intraOpNumThreads: options.intraOpThreads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const input = model.spec.input;
  if (!input) throw new Error(`model ${model.key} has no input spec`);
  return {
    session,
    inputName: session.inputNames[0] ?? 'images',
    outputName: session.outputNames[0] ?? 'output',
    tensor: new Float32Array(3 * input.width * input.height),
  };
}

function load(model: OnnxModelRef): Promise<LoadedModel> {
  let loaded = models.get(model.key);
  if (!loaded) {
    loaded = open(model);
    // A model that fails to load is retried on the next frame rather than cached broken.
    loaded.catch(() => models.delete(model.key));
    models.set(model.key, loaded);
  }
  return loaded;
}

function onnxFamily(model: OnnxModelRef): OnnxFamily {
  const family = model.spec.family;
  if (isOnnxFamily(family)) return family;
  throw new Error(`model ${model.key} of family "${family}" does not run on onnxruntime`);
}

async function detect(request: DetectRequest): Promise<DetectReply> {
  const { model, pixels, width, height } = request;
  try {
    const input = model.spec.input;
    if (!input) throw new Error(`model ${model.key} has no input spec`);
    const loaded = await load(model);
    const t0 = performance.now();
    const frame = { data: new Uint8Array(pixels), width, height };
    const placement = letterbox(frame, input, loaded.tensor);
    const feed = new ort.Tensor('float32', loaded.tensor, [1, 3, input.height, input.width]);
    const t1 = performance.now();
    const results = await loaded.session.run({ [loaded.inputName]: feed });
    const t2 = performance.now();
    const output = results[loaded.outputName];
    if (!output) throw new Error(`model ${model.key} produced no "${loaded.outputName}" output`);
    if (output.type !== 'float32')
      throw new Error(`model ${model.key} outputs ${output.type}; float32 is supported`);
    const detections = postprocess(
      { data: output.data as Float32Array, dims: output.dims },
      { ...model.spec, family: onnxFamily(model), input },
      placement,
      width,
      height,
    );
    const t3 = performance.now();
    return {
      id: request.id,
      ...handBack(pixels),
      detections,
      timing: { preprocessMs: t1 - t0, inferenceMs: t2 - t1, postprocessMs: t3 - t2 },
    };
  } catch (error) {
    return { id: request.id, ...handBack(pixels), error: (error as Error).message };
  }
}

/** Transferred pixels go back to the caller; shared ones never left it. */
function handBack(pixels: ArrayBuffer | SharedArrayBuffer): { pixels?: ArrayBuffer } {
  return pixels instanceof ArrayBuffer ? { pixels } : {};
}

/**
 * A model is checked in a session of its own, released afterwards: the package may still be refused,
 * and the sessions that serve tasks must not change under them.
 */
async function check(request: CheckRequest): Promise<CheckReply> {
  const { check: model, labels } = request;
  let opened: LoadedModel | null = null;
  try {
    const input = model.spec.input;
    if (!input) return { id: request.id, problem: 'has no input spec' };
    opened = await open(model);
    const feed = new ort.Tensor('float32', opened.tensor, [1, 3, input.height, input.width]);
    const output = (await opened.session.run({ [opened.inputName]: feed }))[opened.outputName];
    if (output?.type !== 'float32')
      return { id: request.id, problem: `does not output float32 "${opened.outputName}"` };
    const family = onnxFamily(model);
    decodeOutput(family, output.data as Float32Array, output.dims, input, 1);
    const classes = classCount(family, output.dims);
    const problem =
      classes === labels ? null : `scores ${classes} classes, but the package lists ${labels} labels for it`;
    return { id: request.id, problem };
  } catch (error) {
    return { id: request.id, problem: (error as Error).message };
  } finally {
    await opened?.session.release();
  }
}

// Jobs are answered one at a time by the pool, so a close never arrives while one is running.
port.on('message', (message: WorkerMessage) => {
  if ('close' in message) {
    void releaseAll().then(() => port.close());
  } else if ('check' in message) {
    void check(message).then((reply) => port.postMessage(reply));
  } else {
    void detect(message).then((reply) => {
      port.postMessage(reply, reply.pixels ? [reply.pixels] : []);
      if (++runsSinceCollect < COLLECT_EVERY) return;
      runsSinceCollect = 0;
      collectYoung({ type: 'minor' });
    });
  }
});

/** Ends cleanly: terminating a thread inside onnxruntime aborts the whole process. */
async function releaseAll(): Promise<void> {
  const loaded = await Promise.allSettled(models.values());
  for (const model of loaded) if (model.status === 'fulfilled') await model.value.session.release();
  models.clear();
}
