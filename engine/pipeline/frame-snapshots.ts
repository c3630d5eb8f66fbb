/**
 * The latest picture of a running video task as a small JPEG, for a console that shows many
 * cameras at once and cannot decode that many videos, and the frame under a task's heatmap.
 *
 * A task analyses as few as one frame in 10 s (analysis_fps 0.1), so waiting for its next analysed
 * frame may take that long. Once a task's picture is asked for, its latest analysed frame is kept
 * (copied out of the analysis at most once a second) for as long as pictures are asked for, and a
 * picture is that frame while it is recent for the task's rate; only the first ask waits for the
 * next analysed frame, as long as the task's rate needs. Memory: one frame per task whose picture
 * was asked for in the last minute, dropped when the task closes or its stream is lost. JPEGs are
 * scaled down by sharp off the event loop, one per task and width at a time, reused for a second,
 * so a wall of tiles polling every second or two costs one small encode per camera.
 */
import sharp from 'sharp';
import type { VideoAnalysis } from './video-analysis';

/** How long a JPEG is served again before a new one is made... */
const REUSE_MS = 1_000;
/** ...and how often a watched task's latest frame is copied out of the analysis. */
const REFRESH_MS = 1_000;
/**
 * A frame is recent for this long beyond the task's frame interval, and the first ask waits as long
 * for one: a task that gives none in that time has no picture now (its stream is lost or stalled).
 */
export const FRAME_SLACK_MS = 5_000;
/** A task whose picture nobody asked for in this long stops having its frames kept. */
const WATCH_IDLE_MS = 60_000;
export const SNAPSHOT_WIDTHS = { min: 64, max: 1280, default: 320 } as const;

export interface RgbFrame {
  data: Buffer;
  width: number;
  height: number;
}

interface Kept {
  at: number;
  width: number;
  jpeg: Promise<Buffer | null>;
}

interface Watched {
  unwatch: () => void;
  askedAt: number;
  /** The latest analysed frame copied out, and when; null before one, and while the stream is lost. */
  latest: { frame: RgbFrame; at: number } | null;
  /** Asks waiting for the next analysed frame. */
  waiting: Set<(frame: RgbFrame) => void>;
}

export class FrameSnapshots {
  private readonly kept = new Map<string, Kept>();
  private readonly watched = new Map<string, Watched>();

  // Real time, not the engine's clock: every bound here is about a real stream's frames.
  constructor(
    private readonly video: Pick<VideoAnalysis, 'watch' | 'frameIntervalMs'>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The task's latest frame, `width` pixels wide, as JPEG; null when none came in time. */
  jpeg(taskId: string, width: number): Promise<Buffer | null> {
    const kept = this.kept.get(taskId);
    const now = this.now();
    if (kept && kept.width === width && now - kept.at < REUSE_MS) return kept.jpeg;
    const jpeg = this.frame(taskId).then((frame) =>
      frame
        ? sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
            .resize({ width: Math.min(width, frame.width) })
            .jpeg({ quality: 70 })
            .toBuffer()
        : null,
    );
    this.kept.set(taskId, { at: now, width, jpeg });
    // A failed or empty capture is not served again.
    jpeg.then(
      (value) => value === null && this.forget(taskId, jpeg),
      () => this.forget(taskId, jpeg),
    );
    return jpeg;
  }

  /** Drops what is kept of a task (it closed). */
  release(taskId: string): void {
    this.kept.delete(taskId);
    this.unwatch(taskId);
  }

  /** How long an ask for the task's picture waits at most: its frame interval and the slack. */
  waitMs(taskId: string): number {
    return (this.video.frameIntervalMs(taskId) ?? 0) + FRAME_SLACK_MS;
  }

  /**
   * The task's latest analysed frame (RGB) while it is recent for the task's rate, else the next one
   * within waitMs(); null when none comes (or the task does not run). Shared: callers only read it.
   */
  frame(taskId: string): Promise<RgbFrame | null> {
    const intervalMs = this.video.frameIntervalMs(taskId);
    if (intervalMs === undefined) return Promise.resolve(null);
    const watched = this.watch(taskId);
    const now = this.now();
    watched.askedAt = now;
    const latest = watched.latest;
    if (latest && now - latest.at <= intervalMs + FRAME_SLACK_MS) return Promise.resolve(latest.frame);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        watched.waiting.delete(take);
        resolve(null);
      }, intervalMs + FRAME_SLACK_MS);
      const take = (frame: RgbFrame) => {
        clearTimeout(timer);
        resolve(frame);
      };
      watched.waiting.add(take);
    });
  }

  private watch(taskId: string): Watched {
    const existing = this.watched.get(taskId);
    if (existing) return existing;
    const watched: Watched = {
      unwatch: () => undefined,
      askedAt: this.now(),
      latest: null,
      waiting: new Set(),
    };
    this.watched.set(taskId, watched);
    watched.unwatch = this.video.watch(taskId, (analysed) => {
      const now = this.now();
      if (now - watched.askedAt > WATCH_IDLE_MS && watched.waiting.size === 0) {
        this.unwatch(taskId);
        return;
      }
      // A black fill frame: the stream is lost, and the last real picture is not the camera's now.
      if (!analysed.frame) {
        watched.latest = null;
        return;
      }
      if (watched.latest && now - watched.latest.at < REFRESH_MS && watched.waiting.size === 0) return;
      // The frame's buffer goes back to its pool after this call: copy it.
      const { data, width, height } = analysed.frame;
      const frame = { data: Buffer.from(data), width, height };
      watched.latest = { frame, at: now };
      for (const take of watched.waiting) take(frame);
      watched.waiting.clear();
    });
    return watched;
  }

  private unwatch(taskId: string): void {
    const watched = this.watched.get(taskId);
    if (!watched) return;
    this.watched.delete(taskId);
    watched.unwatch();
    watched.latest = null;
  }

  private forget(taskId: string, jpeg: Promise<Buffer | null>): void {
    if (this.kept.get(taskId)?.jpeg === jpeg) this.kept.delete(taskId);
  }
}
