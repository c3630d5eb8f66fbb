import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type {
  CheckReply,
  CheckRequest,
  DetectReply,
  DetectRequest,
  DetectTiming,
  OnnxModelRef,
  WorkerOptions,
} from './protocol';
import type { Detection, Frame } from './types';

export interface PoolOptions {
  /** Inference threads; each holds its own session of every model it has run. Default: one per core. */
  workers: number;
  /** onnxruntime intra-op threads per session. With one worker per core, 1 avoids oversubscription. */
  intraOpThreads: number;
}

export interface DetectResult {
  detections: Detection[];
  /** The same frame (its pixels handed back by the worker when they were transferred). */
  frame: Frame;
  timing: DetectTiming;
}

/** A frame to analyse or a model to check, waiting for a thread. */
interface Job {
  request: DetectRequest | CheckRequest;
  /** Takes the worker's reply for this request. */
  settle: (reply: DetectReply | CheckReply) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
}

/**
 * Runs ONNX detections on worker threads so the API's event loop never waits for a model. Jobs wait
 * in one FIFO queue; each task keeps at most one job in flight (its pipeline awaits the result), so
 * the queue is bounded by the number of streams and serves them in turn.
 */
export class InferencePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  completed = 0;
  failures = 0;

  private readonly workerCount: number;
  private readonly workerOptions: WorkerOptions;

  constructor(options: Partial<PoolOptions> = {}) {
    this.workerCount = options.workers ?? Math.max(1, availableParallelism());
    this.workerOptions = { intraOpThreads: options.intraOpThreads ?? 1 };
  }

  get queued(): number {
    return this.queue.length;
  }

  /** True when a job sent now would start at once on a thread that has nothing else to do. */
  get idle(): boolean {
    if (this.closed || this.queue.length > 0) return false;
    return this.slots.length < this.workerCount || this.slots.some((slot) => !slot.job);
  }

  detect(model: OnnxModelRef, frame: Frame): Promise<DetectResult> {
    if (this.closed) return Promise.reject(new Error('the inference pool is closed'));
    const { buffer } = frame.data;
    const whole = frame.data.byteOffset === 0 && frame.data.byteLength === buffer.byteLength;
    // A whole buffer goes as it is (shared if it is shared memory, else transferred); a view into a
    // larger one is copied once.
    const pixels = whole ? buffer : frame.data.slice().buffer;
    const request: DetectRequest = {
      id: this.nextId++,
      model,
      pixels,
      width: frame.width,
      height: frame.height,
    };
    return new Promise((resolve, reject) => {
      const settle = (reply: DetectReply | CheckReply) => {
        if ('problem' in reply) return reject(new Error('the inference thread answered another request'));
        const returned = reply.pixels
          ? { data: new Uint8Array(reply.pixels), width: request.width, height: request.height }
          : frame;
        if ('error' in reply) {
          this.failures += 1;
          reject(new Error(reply.error));
        } else {
          this.completed += 1;
          resolve({ detections: reply.detections, frame: returned, timing: reply.timing });
        }
      };
      this.enqueue({ request, settle, reject });
    });
  }

  /**
   * Loads the model in a session of its own, runs it once and compares its output with the family
   * and the number of labels: resolves with the problem in plain words, or null when it fits.
   */
  checkModel(model: OnnxModelRef, labels: number): Promise<string | null> {
    if (this.closed) return Promise.reject(new Error('the inference pool is closed'));
    const request: CheckRequest = { id: this.nextId++, check: model, labels };
    return new Promise((resolve, reject) => {
      const settle = (reply: DetectReply | CheckReply) =>
        'problem' in reply
          ? resolve(reply.problem)
          : reject(new Error('the inference thread answered another request'));
      this.enqueue({ request, settle, reject });
    });
  }

  private enqueue(job: Job): void {
    // Threads start with the first job: an engine without ONNX models never pays for them.
    while (this.slots.length < this.workerCount) this.slots.push(this.spawn(this.workerOptions));
    this.queue.push(job);
    this.dispatch();
  }

  /** Refuses new work, lets frames in flight finish, then has each thread release its sessions and end. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the inference pool is closed'));
    await Promise.all(
      this.slots.map(async (slot) => {
        if (slot.job) await new Promise((idle) => slot.worker.once('message', idle));
        const exited = new Promise((done) => slot.worker.once('exit', done));
        slot.worker.postMessage({ close: true });
        await exited;
      }),
    );
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      slot.job = job;
      const { request } = job;
      const transfer = 'pixels' in request && request.pixels instanceof ArrayBuffer ? [request.pixels] : [];
      slot.worker.postMessage(request, transfer);
    }
  }

  private spawn(options: WorkerOptions): Slot {
    const slot: Slot = { worker: startWorker(options) };
    slot.worker.on('message', (reply: DetectReply | CheckReply) => {
      const job = slot.job;
      slot.job = undefined;
      if (job && job.request.id === reply.id) job.settle(reply);
      this.dispatch();
    });
    // A crashed worker fails its job and is replaced, so one bad frame cannot stop every stream.
    slot.worker.on('error', (error) => {
      slot.job?.reject(error);
      slot.job = undefined;
      if (this.closed) return;
      const index = this.slots.indexOf(slot);
      if (index >= 0) this.slots[index] = this.spawn(options);
      this.dispatch();
    });
    return slot;
  }
}

/**
 * From the source tree (tsx, vitest) the worker is TypeScript and is loaded through tsx; a bundled
 * host ships it compiled as inference-worker.js beside the bundle.
 */
function startWorker(options: WorkerOptions): Worker {
  const self = import.meta.url;
  if (!self.endsWith('.ts'))
    return new Worker(new URL('./inference-worker.js', self), { workerData: options });
  // The ESM build of tsx's API: require.resolve would pick its CommonJS twin, which cannot tsImport.
  const tsxDir = dirname(createRequire(self).resolve('tsx/package.json'));
  const tsxApi = pathToFileURL(join(tsxDir, 'dist', 'esm', 'api', 'index.mjs')).href;
  const entry = new URL('./worker.ts', self).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then(({ tsImport }) => tsImport(${JSON.stringify(entry)}, ${JSON.stringify(self)}))`;
  return new Worker(boot, { eval: true, workerData: options });
}
