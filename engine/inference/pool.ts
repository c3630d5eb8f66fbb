import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DetectReply, DetectRequest, DetectTiming, OnnxModelRef, WorkerOptions } from './protocol';
import type { Detection, Frame } from './types';

export interface PoolOptions {
  /** Inference threads; each holds its own session of every model it has run. Default: one per core. */
  workers: number;
  /** onnxruntime intra-op threads per session. With one worker per core, 1 avoids oversubscription. */
  intraOpThreads: number;
}

export interface DetectResult {
  detections: Detection[];
  /** The same frame, handed back by the worker: its pixels are the caller's again. */
  frame: Frame;
  timing: DetectTiming;
}

interface Job {
  request: DetectRequest;
  resolve: (result: DetectResult) => void;
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

  detect(model: OnnxModelRef, frame: Frame): Promise<DetectResult> {
    if (this.closed) return Promise.reject(new Error('the inference pool is closed'));
    const owned = frame.data.byteOffset === 0 && frame.data.byteLength === frame.data.buffer.byteLength;
    // Only a whole ArrayBuffer can be transferred; a view into a larger one is copied once.
    const pixels = (owned ? frame.data.buffer : frame.data.slice().buffer) as ArrayBuffer;
    const request: DetectRequest = {
      id: this.nextId++,
      model,
      pixels,
      width: frame.width,
      height: frame.height,
    };
    // Threads start with the first frame: an engine without ONNX tasks never pays for them.
    while (this.slots.length < this.workerCount) this.slots.push(this.spawn(this.workerOptions));
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.dispatch();
    });
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
      slot.worker.postMessage(job.request, [job.request.pixels]);
    }
  }

  private spawn(options: WorkerOptions): Slot {
    const slot: Slot = { worker: startWorker(options) };
    slot.worker.on('message', (reply: DetectReply) => {
      const job = slot.job;
      slot.job = undefined;
      if (job && job.request.id === reply.id) {
        const frame = {
          data: new Uint8Array(reply.pixels),
          width: job.request.width,
          height: job.request.height,
        };
        if ('error' in reply) {
          this.failures += 1;
          job.reject(new Error(reply.error));
        } else {
          this.completed += 1;
          job.resolve({ detections: reply.detections, frame, timing: reply.timing });
        }
      }
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
