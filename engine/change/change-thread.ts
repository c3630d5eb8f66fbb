import type { Worker } from 'node:worker_threads';
import { startWorker } from '../worker-thread';
import type { ChangedRegion } from './detect';
import { NotRegisteredError } from './register';
import type { WorkingImage } from './working';

export interface ChangeRequest {
  id: number;
  reference: WorkingImage;
  current: WorkingImage;
}

export type ChangeReply =
  | { id: number; regions: ChangedRegion[] }
  | { id: number; error: string; notRegistered: boolean };

/**
 * detectChanges on a thread of its own (change-worker.ts), one pair after the other. One thread,
 * started with the first pair and never keeping the process alive. The working images are copied
 * to it (a few MB): the caller keeps its image_b as the next reference.
 */
export class ChangeThread {
  private worker?: Worker;
  private readonly pending = new Map<
    number,
    { resolve: (regions: ChangedRegion[]) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;

  /** Rejects with NotRegisteredError for two images that do not show enough of one scene. */
  detect(reference: WorkingImage, current: WorkingImage): Promise<ChangedRegion[]> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, reference, current } satisfies ChangeRequest);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(import.meta.url, 'change-worker');
    worker.on('message', (reply: ChangeReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (!waiting) return;
      if ('regions' in reply) waiting.resolve(reply.regions);
      else waiting.reject(reply.notRegistered ? new NotRegisteredError(reply.error) : new Error(reply.error));
    });
    // A thread that died fails what it held; the next pair starts a new one.
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) =>
      this.fail(worker, new Error(`the change detector stopped (exit code ${code})`)),
    );
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}
