import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordError } from '../media/frame-source';
import type { SegmentTarget } from './segment-output';
import { type Segment, SegmentRing } from './segment-ring';

export interface ClipBufferLimits {
  /** Seconds a segment lasts at least; a clip's ends fall on segment edges. */
  segmentS: number;
  /** How far back a task's buffer reaches: the longest pre-roll a clip may ask for, and some. */
  keepMs: number;
  /** A task's buffer holds this many bytes at most (a 4K camera at 16 Mb/s keeps ~30 s in 64 MiB). */
  maxBytesPerTask: number;
  /**
   * A segment still open after this long means a stream without keyframes (or with keyframes so
   * rare that a clip would be mostly one segment): its recording is turned off, as it is once the
   * open segment passes maxBytesPerTask.
   */
  maxOpenMs: number;
  /** How often the segment lists are read: how late a closed segment is known at most. */
  pollMs: number;
}

export const CLIP_BUFFER_LIMITS: ClipBufferLimits = {
  segmentS: 1,
  keepMs: 40_000,
  maxBytesPerTask: 64 * 1024 * 1024,
  maxOpenMs: 20_000,
  pollMs: 250,
};

/**
 * The codecs whose packets MPEG-TS carries and whose MP4 plays in browsers: what cameras send.
 * Others (MJPEG, MPEG-4 part 2, ...) would go into MPEG-TS as private data no clip can be cut from.
 */
export const RECORDABLE_CODECS: ReadonlySet<string> = new Set(['h264', 'hevc']);

/** Whether a running video task keeps its stream for clips, and why not (task health). */
export type ClipRecording = 'recording' | 'off' | 'no_keyframes';
export interface ClipBufferState {
  clips: ClipRecording;
  reason: string | null;
}

/** What the buffer reads of the ffmpeg that writes it (FrameSource). */
export interface RecordingSource {
  /** The input codec, once ffmpeg named it. */
  readonly codec: string | null;
  /**
   * Why ffmpeg's recording failed: at its start (the stream's size unknown in time, a file it
   * cannot make), or writing (a full disk); null while it works.
   */
  readonly recordError: RecordError | null;
  /**
   * Whether its ffmpeg runs now. One that ended (its stream dropped; the next starts after a
   * backoff) leaves its last segment unfinished, which says nothing of the stream's keyframes.
   */
  readonly alive: boolean;
}

interface TaskBuffer {
  ring: SegmentRing;
  state: ClipBufferState;
  /** The task's latest ffmpeg, and whether it writes the buffer. */
  latest: RecordingSource | null;
  latestRecords: boolean;
  /** Its recording failed to start once (its stream's size came too late for a quick start?): probed fully from then on. */
  fullProbe: boolean;
}

/**
 * Every running video task's buffer of its own stream (segment-ring.ts), under one root in the data
 * dir, read on one timer. What a previous engine left there is removed at start: a buffer only ever
 * serves clips of the stream as it runs now. A task whose stream cannot be kept (a codec MPEG-TS
 * does not carry, no keyframes) has its recording turned off until it stops: `reopen` has its
 * source's ffmpeg opened again without the recording, and is asked again at each poll while the
 * task's latest ffmpeg still records. A recording that fails to start is tried once more with the
 * stream probed fully, then turned off: its ffmpeg gives no frame, so the analysis waits on it.
 */
export class ClipBuffers {
  private readonly tasks = new Map<string, TaskBuffer>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly root: string,
    private readonly limits: ClipBufferLimits = CLIP_BUFFER_LIMITS,
    private readonly reopen: (taskId: string) => void = () => {},
  ) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    this.timer = setInterval(() => {
      for (const [taskId, task] of this.tasks) this.check(taskId, task);
    }, limits.pollMs);
    this.timer.unref();
  }

  /** Where the task's next ffmpeg copies its stream, made if need be; undefined while its recording is off. */
  target(taskId: string): SegmentTarget | undefined {
    const task = this.task(taskId);
    if (task.state.clips !== 'recording') return undefined;
    const failed = task.latest?.recordError;
    // A start is tried once more with the stream probed fully; after that, or a failed write,
    // the analysis goes on without recording.
    if (failed && (task.fullProbe || !failed.atStart)) {
      const what = failed.atStart ? 'could not start' : 'failed';
      task.state = { clips: 'off', reason: `the recording ${what}: ${failed.message}` };
      return undefined;
    }
    if (failed) task.fullProbe = true;
    mkdirSync(task.ring.dir, { recursive: true });
    return { dir: task.ring.dir, segmentS: this.limits.segmentS, fullProbe: task.fullProbe };
  }

  /**
   * The task's ffmpeg `run`, made with target()'s answer, is now its stream's: the runs before it
   * have ended.
   */
  follow(taskId: string, run: number, source: RecordingSource): void {
    const task = this.task(taskId);
    task.ring.follow(run);
    task.latest = source;
    task.latestRecords = task.state.clips === 'recording';
  }

  /** The task's closed segments overlapping [from, to], oldest first; none when it has no buffer. */
  segments(taskId: string, from: number, to: number): Segment[] {
    const task = this.tasks.get(taskId);
    if (task?.state.clips !== 'recording') return [];
    task.ring.poll();
    return task.ring.between(from, to);
  }

  /** Whether the task's stream is kept for clips; off when it has no buffer. */
  state(taskId: string): ClipBufferState {
    return this.tasks.get(taskId)?.state ?? { clips: 'off', reason: null };
  }

  /** The task no longer runs: its buffer goes. */
  end(taskId: string): void {
    this.tasks.get(taskId)?.ring.dispose();
    this.tasks.delete(taskId);
  }

  close(): void {
    clearInterval(this.timer);
    for (const taskId of [...this.tasks.keys()]) this.end(taskId);
  }

  /** Reads the task's buffer and turns its recording off when its stream cannot be kept. */
  private check(taskId: string, task: TaskBuffer): void {
    try {
      task.ring.poll();
      if (task.state.clips === 'recording') task.state = this.verdict(task);
    } catch (error) {
      // Its files failed it (one removed or replaced under it, one still held open): that task's
      // recording stops; the other tasks', and the engine, go on.
      if (task.state.clips === 'recording')
        task.state = { clips: 'off', reason: `the buffer failed: ${(error as Error).message}` };
    }
    if (task.state.clips !== 'recording' && task.latestRecords) this.reopen(taskId);
  }

  /** Whether a recording task's stream can be kept: its codec, and its open segment's bounds. */
  private verdict(task: TaskBuffer): ClipBufferState {
    const codec = task.latest?.codec ?? null;
    if (codec !== null && !RECORDABLE_CODECS.has(codec))
      return { clips: 'off', reason: `clips are kept of H.264 and H.265 streams, not ${codec}` };
    // Judged only while its ffmpeg runs: an outage longer than maxOpenMs must not turn clips off for good.
    const overgrown = task.latest?.alive === false ? null : task.ring.overgrown();
    return overgrown ? { clips: 'no_keyframes', reason: overgrown } : task.state;
  }

  private task(taskId: string): TaskBuffer {
    let task = this.tasks.get(taskId);
    if (!task) {
      // Task ids are UUIDs the engine made: safe as a directory name.
      const ring = new SegmentRing(join(this.root, taskId), {
        keepMs: this.limits.keepMs,
        maxBytes: this.limits.maxBytesPerTask,
        maxOpenMs: this.limits.maxOpenMs,
      });
      task = {
        ring,
        state: { clips: 'recording', reason: null },
        latest: null,
        latestRecords: false,
        fullProbe: false,
      };
      this.tasks.set(taskId, task);
    }
    return task;
  }
}
