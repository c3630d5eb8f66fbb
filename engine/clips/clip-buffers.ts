import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SegmentTarget } from './segment-output';
import { type Segment, SegmentRing } from './segment-ring';

export interface ClipBufferLimits {
  /** Seconds a segment lasts at least; a clip's ends fall on segment edges. */
  segmentS: number;
  /** How far back a task's buffer reaches: the longest pre-roll a clip may ask for, and some. */
  keepMs: number;
  /** A task's buffer holds this many bytes at most (a 4K camera at 16 Mb/s keeps ~30 s in 64 MiB). */
  maxBytesPerTask: number;
  /** How often the segment lists are read: how late a closed segment is known at most. */
  pollMs: number;
}

export const CLIP_BUFFER_LIMITS: ClipBufferLimits = {
  segmentS: 1,
  keepMs: 40_000,
  maxBytesPerTask: 64 * 1024 * 1024,
  pollMs: 250,
};

/**
 * Every running video task's buffer of its own stream (segment-ring.ts), under one root in the data
 * dir, read on one timer. What a previous engine left there is removed at start: a buffer only ever
 * serves clips of the stream as it runs now.
 */
export class ClipBuffers {
  private readonly rings = new Map<string, SegmentRing>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly root: string,
    private readonly limits: ClipBufferLimits = CLIP_BUFFER_LIMITS,
  ) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    this.timer = setInterval(() => {
      for (const ring of this.rings.values()) ring.poll();
    }, limits.pollMs);
    this.timer.unref();
  }

  /** Where the task's next ffmpeg copies its stream, made if need be. */
  target(taskId: string): SegmentTarget {
    const dir = this.ring(taskId).dir;
    mkdirSync(dir, { recursive: true });
    return { dir, segmentS: this.limits.segmentS };
  }

  /** The task's ffmpeg `run` now writes its buffer: the runs before it have ended. */
  follow(taskId: string, run: number): void {
    this.ring(taskId).follow(run);
  }

  /** The task's closed segments overlapping [from, to], oldest first; none when it has no buffer. */
  segments(taskId: string, from: number, to: number): Segment[] {
    const ring = this.rings.get(taskId);
    ring?.poll();
    return ring?.between(from, to) ?? [];
  }

  /** The task no longer runs: its buffer goes. */
  end(taskId: string): void {
    this.rings.get(taskId)?.dispose();
    this.rings.delete(taskId);
  }

  close(): void {
    clearInterval(this.timer);
    for (const taskId of [...this.rings.keys()]) this.end(taskId);
  }

  private ring(taskId: string): SegmentRing {
    let ring = this.rings.get(taskId);
    if (!ring) {
      // Task ids are UUIDs the engine made: safe as a directory name.
      ring = new SegmentRing(join(this.root, taskId), {
        keepMs: this.limits.keepMs,
        maxBytes: this.limits.maxBytesPerTask,
      });
      this.rings.set(taskId, ring);
    }
    return ring;
  }
}
