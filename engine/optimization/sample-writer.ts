import { mkdir, statfs, writeFile } from 'node:fs/promises';
import sharp from 'sharp';
import type { Clock } from '../clock';
import type { SampleCandidate } from './collector';
import { OPTIMIZATION_LIMITS } from './limits';
import type { OptimizationStore } from './store';

export interface SampleWriterDeps {
  store: OptimizationStore;
  clock: Clock;
  optimizationId: string;
  maxSamples: number;
  onError(error: unknown): void;
}

/**
 * Stores a run's samples one at a time, away from the analysis: the frame is encoded to JPEG (sharp,
 * on libuv's threads), written, and only then its row inserted. At most a few samples wait; one
 * more is dropped and counted, never waited for. Stops taking samples at max_samples or the disk bounds.
 */
export class SampleWriter {
  dropped = 0;
  limit: 'max_samples' | 'disk' | null = null;
  private waiting = 0;
  private stored = 0;
  private bytes = 0;
  private nextId = 1;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly deps: SampleWriterDeps) {}

  offer(candidate: SampleCandidate): void {
    if (this.limit || this.stored + this.waiting >= this.deps.maxSamples) return;
    if (this.waiting >= OPTIMIZATION_LIMITS.queue) {
      this.dropped += 1;
      return;
    }
    this.waiting += 1;
    this.chain = this.chain
      .then(() => this.write(candidate))
      .catch((error: unknown) => {
        this.dropped += 1;
        this.deps.onError(error);
      })
      .finally(() => {
        this.waiting -= 1;
      });
  }

  /** Resolves once every sample taken so far is stored (or dropped). */
  drain(): Promise<void> {
    return this.chain;
  }

  private async write(candidate: SampleCandidate): Promise<void> {
    if (this.limit) return;
    const { store, optimizationId } = this.deps;
    const { data, width, height } = candidate.frame;
    const pixels = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const jpeg = await sharp(pixels, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: OPTIMIZATION_LIMITS.jpegQuality })
      .toBuffer();
    const dir = store.runDir(optimizationId);
    await mkdir(dir, { recursive: true });
    const disk = await statfs(dir);
    if (
      this.bytes + jpeg.length > OPTIMIZATION_LIMITS.runBytes ||
      disk.bavail * disk.bsize - jpeg.length < OPTIMIZATION_LIMITS.minFreeBytes
    ) {
      this.limit = 'disk';
      return;
    }
    const sampleId = this.nextId++;
    await writeFile(store.imagePath(optimizationId, sampleId), jpeg);
    store.insertSample(optimizationId, {
      sample_id: sampleId,
      app_id: candidate.appId,
      frame_id: candidate.frameId,
      timestamp: candidate.timestampMs,
      width,
      height,
      reasons: candidate.reasons,
      annotations: candidate.annotations,
      missed: [],
      bytes: jpeg.length,
      verdict: 'none',
      created_at: this.deps.clock.now(),
    });
    this.stored += 1;
    this.bytes += jpeg.length;
    if (this.stored >= this.deps.maxSamples) this.limit = 'max_samples';
  }
}
