import type { ModelInput } from '../packages/manifest';
import type { PooledFrame } from './frame-reader';

/** The model input that a task's frames are also scaled to by ffmpeg: its size and how a picture fits it. */
export type DetectorInput = Pick<ModelInput, 'width' | 'height' | 'letterbox'>;

/**
 * ffmpeg's scale of an analysis frame to the size it takes inside the model input, by the arithmetic
 * of letterboxFit() (inference/letterbox.ts): the inference host then only normalises it. A 1280x720
 * frame is 2.8 MB to copy to a host and about 1.5 ms to resize there; its 416x234 copy is 0.3 MB.
 */
export function detectorScaleFilter(input: DetectorInput): string {
  const { width, height } = input;
  if (input.letterbox === 'stretch') return `scale=${width}:${height}:flags=bilinear`;
  const scale = `min(${width}/iw\\,${height}/ih)`;
  return `scale=w='max(1\\,round(iw*${scale}))':h='max(1\\,round(ih*${scale}))':flags=bilinear`;
}

// ffmpeg writes both outputs of a frame before the next; more apart than this is a stream out of step.
const MAX_UNPAIRED = 4;

/**
 * Pairs the nth analysis frame with the nth detector-sized frame of the same ffmpeg (they come
 * through two sockets, in either order) and hands on each frame once its scaled copy is attached;
 * one release gives both buffers back.
 */
export class FramePairer {
  private readonly frames: PooledFrame[] = [];
  private readonly scaled: PooledFrame[] = [];

  /** A whole analysis frame; returns the frames now paired, in order. Throws when out of step. */
  addFrame(frame: PooledFrame): PooledFrame[] {
    return this.add(this.frames, frame);
  }

  /** A whole detector-sized frame; returns the frames now paired, in order. Throws when out of step. */
  addScaled(frame: PooledFrame): PooledFrame[] {
    return this.add(this.scaled, frame);
  }

  /** Gives back the buffers of frames that never found their pair (ffmpeg ended between two outputs). */
  clear(): void {
    for (const frame of [...this.frames.splice(0), ...this.scaled.splice(0)]) frame.release();
  }

  private add(queue: PooledFrame[], frame: PooledFrame): PooledFrame[] {
    queue.push(frame);
    const paired: PooledFrame[] = [];
    while (this.frames.length > 0 && this.scaled.length > 0) {
      const whole = this.frames.shift() as PooledFrame;
      const scaled = this.scaled.shift() as PooledFrame;
      const { data, width, height } = scaled;
      paired.push({
        ...whole,
        scaled: { data, width, height },
        release: () => {
          whole.release();
          scaled.release();
        },
      });
    }
    if (queue.length > MAX_UNPAIRED) {
      this.clear();
      throw new Error(`${MAX_UNPAIRED + 1} frames of one output of ffmpeg without their pair in the other`);
    }
    return paired;
  }
}
