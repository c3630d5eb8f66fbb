import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket, type SocketConstructorOpts } from 'node:net';
import { dirname, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import type { ModelInput } from '../packages/manifest';
import type { Frame } from '../vision/types';
import { changeProbabilities, quantise } from './change-map';
import { decodeOutputs, outputClassCount } from './decode';
import { isChangeModelFamily, isOnnxFamily, type OnnxFamily } from './families';
import { inputLayout, type LetterboxInfo, letterbox, letterboxInterleaved } from './letterbox';
import { postprocess } from './nms';
import type { OutputTensor } from './outputs';
import {
  type ChangeMapReply,
  type ChangeMapRequest,
  type CheckReply,
  type CheckRequest,
  type DetectReply,
  type DetectRequest,
  type HostOptions,
  type HostReady,
  type HostReply,
  type HostRequest,
  type OnnxModelRef,
  OVER_MEMORY_MARK,
  type Placement,
} from './protocol';
import { type ExecutionProvider, openOnProvider, providerCandidates } from './providers';
import { RequestReader } from './request-stream';

/**
 * An inference host: a child process of the engine (see host.ts) that owns an onnxruntime session
 * per model it has been asked to run and does the whole per-frame job (letterbox, run, decode, NMS),
 * so the engine only routes frames. A process, not a thread, because a model can run for ever or
 * take all memory: a process can be bounded and killed without taking the engine along.
 */

const options = JSON.parse(process.argv[2] ?? '{}') as HostOptions;
if (!process.send) throw new Error('the inference host must be started by the engine, with an IPC channel');

/** Resolves once the answer is handed to the channel, so an ending host does not drop it. */
const deliver = (reply: HostReply) =>
  new Promise<void>((done) => process.send?.(reply, undefined, undefined, () => done()));

interface LoadedModel {
  session: ort.InferenceSession;
  placement: Placement;
  /** The inputs that take an image: one for a detector, A and B (in this order) for a change model. */
  inputNames: string[];
  /** The model's other inputs the engine fills (D-FINE's orig_target_sizes), by name. */
  extraFeeds: Record<string, ort.Tensor>;
  /** One per image input, reused between frames: the tensor is the same size for every frame of a model. */
  tensors: Array<Float32Array | Uint8Array>;
  dims: number[];
}

const models = new Map<string, Promise<LoadedModel>>();

// Every run hands its output back in a fresh external buffer (about 1 MB) that V8 frees only when
// it collects; a young-generation collection every few frames (0.3 ms) keeps them from piling up.
const COLLECT_EVERY = 8;
setFlagsFromString('--expose-gc');
const collectYoung = runInNewContext('gc') as (options: { type: 'minor' }) => void;
let runsSinceCollect = 0;

// What onnxruntime says when an allocation fails: under the host's memory bound, the model asked too much.
const OUT_OF_MEMORY = /Failed to allocate memory|bad_alloc/i;

/** The CUDA provider is a library beside onnxruntime's binding once an install adds it (docs/gpu.md). */
function cudaInstalled(): boolean {
  const binding = join(dirname(createRequire(import.meta.url).resolve('onnxruntime-node')), '..', 'bin');
  const library = `napi-v6/${process.platform}/${process.arch}/libonnxruntime_providers_cuda.so`;
  return existsSync(join(binding, library));
}

const candidates: readonly ExecutionProvider[] = providerCandidates(
  options.provider,
  process.platform,
  process.arch,
  process.platform === 'linux' && cudaInstalled(),
);

/** An input that carries the frame's size rather than the frame (DETR exports' orig_target_sizes). */
const SIZE_INPUT = /size/i;

async function open(model: OnnxModelRef): Promise<LoadedModel> {
  const { session, ...placement } = await openOnProvider(candidates, (provider) =>
    ort.InferenceSession.create(model.file, {
      executionProviders: [provider],
      intraOpNumThreads: options.intraOpThreads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
    }),
  );
  const input = model.spec.input;
  if (!input) throw new Error(`model ${model.key} has no input spec`);
  const { layout, dtype } = inputLayout(input);
  const size = 3 * input.width * input.height;
  // The boxes come back in the pixels of the size given, which is the input's: undone like the letterbox.
  const extraFeeds = Object.fromEntries(
    session.inputNames
      .filter((name) => SIZE_INPUT.test(name))
      .map((name) => [
        name,
        new ort.Tensor('int64', BigInt64Array.of(BigInt(input.width), BigInt(input.height)), [1, 2]),
      ]),
  );
  const imageInputs = session.inputNames.filter((name) => !SIZE_INPUT.test(name));
  const changeModel = isChangeModelFamily(model.spec.family);
  if (changeModel && (imageInputs.length !== 2 || session.inputNames.length !== 2))
    throw new Error(
      `takes ${session.inputNames.length} input(s) (${session.inputNames.join(', ')}); a change model takes two images, A and B`,
    );
  const inputNames = changeModel ? imageInputs : [imageInputs[0] ?? 'images'];
  return {
    session,
    placement,
    inputNames,
    extraFeeds,
    tensors: inputNames.map(() => (dtype === 'uint8' ? new Uint8Array(size) : new Float32Array(size))),
    dims: layout === 'NHWC' ? [1, input.height, input.width, 3] : [1, 3, input.height, input.width],
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

/** The frame (or a blank one, for a check) resized into the model's input tensor (of image input `index`). */
function fill(loaded: LoadedModel, frame: Frame, input: ModelInput, index = 0): LetterboxInfo {
  const tensor = loaded.tensors[index] as Float32Array | Uint8Array;
  if (inputLayout(input).layout === 'NHWC' || tensor instanceof Uint8Array)
    return letterboxInterleaved(frame, input, tensor);
  return letterbox(frame, input, tensor);
}

/** Runs the model on its filled tensor; every output, read as numbers. */
async function run(loaded: LoadedModel, model: OnnxModelRef): Promise<OutputTensor[]> {
  const feeds = Object.fromEntries(
    loaded.inputNames.map((name, i) => {
      const tensor = loaded.tensors[i] as Float32Array | Uint8Array;
      const type = tensor instanceof Uint8Array ? 'uint8' : 'float32';
      return [name, new ort.Tensor(type, tensor, loaded.dims)];
    }),
  );
  const results = await loaded.session.run({ ...feeds, ...loaded.extraFeeds });
  return loaded.session.outputNames.map((name) => {
    const output = results[name];
    if (!output) throw new Error(`model ${model.key} produced no "${name}" output`);
    const { data } = output;
    if (typeof data === 'string' || (Array.isArray(data) && typeof data[0] === 'string'))
      throw new Error(`model ${model.key} outputs ${output.type} "${name}"; numbers are supported`);
    // int64 labels (a few hundred) become numbers; float outputs are read in place.
    const values =
      data instanceof BigInt64Array || data instanceof BigUint64Array ? Array.from(data, Number) : data;
    return { name, data: values as ArrayLike<number>, dims: output.dims };
  });
}

async function detect(request: DetectRequest, pixels: Uint8Array): Promise<DetectReply> {
  const { model, width, height } = request;
  try {
    const input = model.spec.input;
    if (!input) throw new Error(`model ${model.key} has no input spec`);
    const loaded = await load(model);
    const t0 = performance.now();
    const placement = fill(loaded, { data: pixels, width, height }, input);
    const t1 = performance.now();
    const outputs = await run(loaded, model);
    const t2 = performance.now();
    const detections = postprocess(
      outputs,
      { ...model.spec, family: onnxFamily(model), input },
      model.classes ?? 0,
      placement,
      width,
      height,
    );
    const t3 = performance.now();
    return {
      id: request.id,
      detections,
      timing: { preprocessMs: t1 - t0, inferenceMs: t2 - t1, postprocessMs: t3 - t2 },
      placement: loaded.placement,
    };
  } catch (error) {
    const message = (error as Error).message;
    return { id: request.id, error: message, outOfMemory: OUT_OF_MEMORY.test(message) };
  }
}

/** A change model on one tile pair of its input size: the tile's probabilities of change. */
async function changeMap(request: ChangeMapRequest, pixels: Uint8Array): Promise<ChangeMapReply> {
  const { model, width, height } = request;
  try {
    const input = model.spec.input;
    if (!input) throw new Error(`model ${model.key} has no input spec`);
    const loaded = await load(model);
    const size = width * height * 3;
    const t0 = performance.now();
    fill(loaded, { data: pixels.subarray(0, size), width, height }, input, 0);
    fill(loaded, { data: pixels.subarray(size, 2 * size), width, height }, input, 1);
    const t1 = performance.now();
    const outputs = await run(loaded, model);
    const t2 = performance.now();
    const map = quantise(changeProbabilities(outputs, input, model.spec.change_output));
    const t3 = performance.now();
    return {
      id: request.id,
      changeMap: Buffer.from(map.buffer, map.byteOffset, map.byteLength).toString('base64'),
      timing: { preprocessMs: t1 - t0, inferenceMs: t2 - t1, postprocessMs: t3 - t2 },
      placement: loaded.placement,
    };
  } catch (error) {
    const message = (error as Error).message;
    return { id: request.id, error: message, outOfMemory: OUT_OF_MEMORY.test(message) };
  }
}

/**
 * A model is checked in a session of its own, released afterwards: the package may still be refused.
 * The engine checks in a short-lived host of its own, never in one that serves tasks.
 */
async function check(request: CheckRequest): Promise<CheckReply> {
  const { model, labels } = request;
  let opened: LoadedModel | null = null;
  try {
    const input = model.spec.input;
    if (!input) return { id: request.id, problem: 'has no input spec' };
    opened = await open(model);
    const blank = {
      data: new Uint8Array(3 * input.width * input.height),
      width: input.width,
      height: input.height,
    };
    for (let i = 0; i < opened.inputNames.length; i++) fill(opened, blank, input, i);
    const outputs = await run(opened, model);
    if (isChangeModelFamily(model.spec.family)) {
      changeProbabilities(outputs, input, model.spec.change_output);
      return { id: request.id, problem: null };
    }
    const family = onnxFamily(model);
    decodeOutputs(family, outputs, input, labels, 1);
    const classes = outputClassCount(family, outputs, labels);
    const problem =
      classes === null || classes === labels
        ? null
        : `scores ${classes} classes, but the package lists ${labels} labels for it`;
    return { id: request.id, problem };
  } catch (error) {
    const message = (error as Error).message;
    return { id: request.id, problem: message, outOfMemory: OUT_OF_MEMORY.test(message) };
  } finally {
    await opened?.session.release();
  }
}

async function answer(request: HostRequest, pixels: Uint8Array): Promise<HostReply> {
  if (request.kind === 'check') return check(request);
  const reply = request.kind === 'detect' ? await detect(request, pixels) : await changeMap(request, pixels);
  if (++runsSinceCollect >= COLLECT_EVERY) {
    runsSinceCollect = 0;
    collectYoung({ type: 'minor' });
  }
  return reply;
}

const WATCHDOG_INTERVAL_MS = 100;

/**
 * Where the kernel does not bound the host (no prlimit and no parent-death signal: macOS, Windows),
 * a thread of its own does, since the main thread may be inside a model for seconds. Past the
 * memory bound it says so on stdout (so the engine knows why on every platform) and kills the
 * process; it kills it too once the engine is gone.
 */
function watchdog(limitMb: number, engine: number): void {
  const code = `
    const { writeSync } = require('node:fs');
    const limit = ${limitMb} * 1024 * 1024;
    const engineGone = () => {
      try {
        process.kill(${engine}, 0);
        return false;
      } catch (error) {
        return error.code === 'ESRCH';
      }
    };
    setInterval(() => {
      if (engineGone()) process.kill(process.pid, 'SIGKILL');
      if (process.memoryUsage.rss() <= limit) return;
      writeSync(1, ${JSON.stringify(OVER_MEMORY_MARK)});
      process.kill(process.pid, 'SIGKILL');
    }, ${WATCHDOG_INTERVAL_MS});`;
  new Worker(code, { eval: true }).unref();
}

if (options.watchdogMb > 0) watchdog(options.watchdogMb, process.ppid);

// Requests come one at a time (the engine waits for each answer), in order.
let working: Promise<unknown> = Promise.resolve();
const reader = new RequestReader((request, pixels) => {
  working = working.then(async () => deliver(await answer(request, pixels)));
});
// Node's Socket takes onread from its constructor too (net.connect passes it there), though its
// types list it for connect() only.
const requests = new Socket({
  fd: 0,
  readable: true,
  writable: false,
  onread: {
    buffer: () => reader.target(),
    callback: (bytes: number) => {
      reader.advance(bytes);
      return true;
    },
  },
} as SocketConstructorOpts);
// The engine closes the stream to end the host, or is gone: finish what runs, release, leave.
requests.on('end', () => void working.then(releaseAll).finally(() => process.exit(0)));
process.on('disconnect', () => process.exit(0));
process.send({ ready: true } satisfies HostReady);

async function releaseAll(): Promise<void> {
  const loaded = await Promise.allSettled(models.values());
  for (const model of loaded) if (model.status === 'fulfilled') await model.value.session.release();
  models.clear();
}
