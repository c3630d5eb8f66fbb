import type { Worker } from 'node:worker_threads';
import { startWorker } from '../worker-thread';

export interface BmpRequest {
  id: number;
  bytes: Uint8Array;
}

export type BmpReply =
  | { id: number; width: number; height: number; data: Uint8Array }
  | { id: number; error: string };

export interface RgbaImage {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel. */
  data: Uint8Array;
}

/**
 * Decodes BMP files on a thread of their own (sharp reads no BMP, and bmp-ts would hold the event
 * loop for up to a second on a 100 MP file). One thread, started with the first BMP and never
 * keeping the process alive; requests are answered in order. How many decode at once is bounded
 * by the caller's decode budget.
 */
export class BmpDecoder {
  private worker?: Worker;
  private readonly pending = new Map<
    number,
    { resolve: (image: RgbaImage) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;

  decode(bytes: Uint8Array): Promise<RgbaImage> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, bytes } satisfies BmpRequest);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(import.meta.url, 'bmp-worker');
    worker.unref();
    worker.on('message', (reply: BmpReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (!waiting) return;
      if ('error' in reply) waiting.reject(new Error(reply.error));
      else waiting.resolve({ width: reply.width, height: reply.height, data: reply.data });
    });
    // A thread that died fails what it held; the next BMP starts a new one.
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`the BMP decoder stopped (exit code ${code})`)));
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
