/**
 * The latest picture of a running video task as a small JPEG, for a console that shows many
 * cameras at once and cannot decode that many videos: the next analysed frame, copied out of the
 * analysis and scaled down by sharp off the event loop. One capture per task at a time serves every
 * caller, and an answer is reused for a moment, so a wall of tiles polling every second or two costs
 * one frame copy and one small encode per camera.
 */
import sharp from 'sharp';
import type { VideoAnalysis } from './video-analysis';

/** How long a picture is served again before a new frame is taken. */
const REUSE_MS = 1_000;
/** A task that gives no frame for this long has no picture now (its stream is lost or stalled). */
const FRAME_WAIT_MS = 5_000;
export const SNAPSHOT_WIDTHS = { min: 64, max: 1280, default: 320 } as const;

interface Kept {
  at: number;
  width: number;
  jpeg: Promise<Buffer | null>;
}

export class FrameSnapshots {
  private readonly kept = new Map<string, Kept>();

  // Real time, not the engine's clock: both bounds are about a real stream's frames.
  constructor(private readonly video: Pick<VideoAnalysis, 'watch'>) {}

  /** The task's next frame, `width` pixels wide, as JPEG; null when no frame came in time. */
  jpeg(taskId: string, width: number): Promise<Buffer | null> {
    const kept = this.kept.get(taskId);
    const now = performance.now();
    if (kept && kept.width === width && now - kept.at < REUSE_MS) return kept.jpeg;
    const jpeg = this.nextFrame(taskId).then((frame) =>
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
  }

  private forget(taskId: string, jpeg: Promise<Buffer | null>): void {
    if (this.kept.get(taskId)?.jpeg === jpeg) this.kept.delete(taskId);
  }

  /** A copy of the task's next analysed frame (RGB); null when none comes within 5 s. */
  nextFrame(taskId: string): Promise<{ data: Buffer; width: number; height: number } | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        unwatch();
        resolve(null);
      }, FRAME_WAIT_MS);
      const unwatch = this.video.watch(taskId, (analysed) => {
        if (!analysed.frame) return;
        // The frame's buffer goes back to its pool after this call: copy it.
        const { data, width, height } = analysed.frame;
        unwatch();
        clearTimeout(timer);
        resolve({ data: Buffer.from(data), width, height });
      });
    });
  }
}
