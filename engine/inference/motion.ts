import type { Detection, Frame } from '../vision/types';
import { blobsOf } from './blobs';
import { openClose } from './morphology';

// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

export interface MotionOptions {
  /** The frame is area-averaged by a whole factor to a grayscale working image at least this wide. */
  workWidth: number;
  /** Frames that only learn the background after a start, reset, size change or scene change. */
  warmupFrames: number;
  /** Per-frame learning rate of the background mean and variance where there is no motion. */
  learningRate: number;
  /** A pixel is foreground when it departs from the background by more than this many standard deviations... */
  sigmaFactor: number;
  /** ...and by more than this many gray levels, so still, noise-free areas do not trip on compression noise. */
  minDifference: number;
  /** Consecutive frames of motion after which a pixel joins the background: a parked car stops being motion. */
  absorbFrames: number;
  /** Share of the frame in motion beyond which the frame is a scene change and the model starts over. */
  sceneChangeFraction: number;
  /** Blobs under this share of the frame area are dropped. */
  minAreaFraction: number;
  /** Radius in working pixels of the closing that joins the fragments of one object. */
  closeRadius: number;
}

export const MOTION_DEFAULTS: Readonly<MotionOptions> = {
  workWidth: 160,
  warmupFrames: 10,
  learningRate: 0.05,
  sigmaFactor: 3,
  minDifference: 12,
  absorbFrames: 300,
  sceneChangeFraction: 0.6,
  minAreaFraction: 0.0005,
  closeRadius: 2,
};

/** Buffers for one frame size; all per-pixel arrays are on the working grid. */
interface Workspace {
  width: number;
  height: number;
  factor: number;
  cols: number;
  rows: number;
  gray: Float32Array;
  mean: Float32Array;
  variance: Float32Array;
  /** Warm-up frames side by side, pixel-major: warmup[i * warmupFrames + k]. */
  warmup: Float32Array;
  /** |difference| / threshold on foreground pixels, 0 elsewhere. */
  ratio: Float32Array;
  /** Consecutive frames each pixel has been in the cleaned motion mask. */
  framesInMotion: Uint32Array;
  /** This frame's pixels beyond the threshold, before cleaning. */
  foreground: Uint8Array;
  /** Raw foreground after opening and closing. */
  mask: Uint8Array;
  spare: Uint8Array;
  scratch: Uint8Array;
  visited: Uint8Array;
  queue: Int32Array;
  rowSums: Uint32Array;
  /** Histogram of rounded differences -255..255 for the median brightness shift. */
  shiftHistogram: Uint32Array;
  /** One pixel's warm-up samples, sorted for the median. */
  samples: Float32Array;
}

/** Background subtraction on a downscaled grayscale image; blobs of motion become detections of class 0. */
export class MotionDetector {
  private readonly options: MotionOptions;
  private workspace: Workspace | null = null;
  /** Frames learned since the model last started; detection begins once it reaches warmupFrames. */
  private framesLearned = 0;

  constructor(options: Partial<MotionOptions> = {}) {
    this.options = { ...MOTION_DEFAULTS, ...options };
    if (!(this.options.warmupFrames >= 1)) throw new RangeError('warmupFrames must be at least 1');
  }

  /** True while the background is being learned (after a start, reset, size or scene change): detect() finds nothing then. */
  get warming(): boolean {
    return this.framesLearned < this.options.warmupFrames;
  }

  /** Forgets the background; the next frames warm up again. */
  reset(): void {
    this.framesLearned = 0;
  }

  detect(frame: Frame): Detection[] {
    const ws = this.workspaceFor(frame);
    toWorkingGray(frame, ws);
    if (this.framesLearned < this.options.warmupFrames) {
      this.learnWarmup(ws);
      return [];
    }
    const shift = medianShift(ws);
    const foregroundCount = this.classify(ws, shift);
    if (foregroundCount > this.options.sceneChangeFraction * ws.gray.length) {
      // Most of the picture changed at once (camera moved, scene cut): a new background, not one giant blob.
      this.framesLearned = 0;
      this.learnWarmup(ws);
      return [];
    }
    openClose(ws.foreground, ws.mask, ws.spare, ws.scratch, ws.cols, ws.rows, this.options.closeRadius);
    this.updateBackground(ws, shift);
    return this.blobs(ws);
  }

  private workspaceFor(frame: Frame): Workspace {
    const { width, height, data } = frame;
    if (!(width > 0 && height > 0) || data.length < width * height * 3) {
      throw new RangeError(
        `frame of ${width}x${height} needs ${width * height * 3} bytes, has ${data.length}`,
      );
    }
    const current = this.workspace;
    if (current && current.width === width && current.height === height) return current;
    // First frame, or the stream came back at another resolution: the old background means nothing.
    this.framesLearned = 0;
    this.workspace = allocateWorkspace(width, height, this.options);
    return this.workspace;
  }

  private learnWarmup(ws: Workspace): void {
    const frames = this.options.warmupFrames;
    const slot = this.framesLearned;
    const { gray, warmup } = ws;
    for (let i = 0; i < gray.length; i++) warmup[i * frames + slot] = gray[i] as number;
    this.framesLearned++;
    if (this.framesLearned === frames) seedFromWarmup(ws, frames);
  }

  /** Marks pixels that depart from the shift-compensated background; returns how many. */
  private classify(ws: Workspace, shift: number): number {
    const { gray, mean, variance, foreground, ratio } = ws;
    const sigma2 = this.options.sigmaFactor * this.options.sigmaFactor;
    const floor2 = this.options.minDifference * this.options.minDifference;
    let count = 0;
    for (let i = 0; i < gray.length; i++) {
      const d = (gray[i] as number) - (mean[i] as number) - shift;
      const d2 = d * d;
      const limit2 = Math.max(sigma2 * (variance[i] as number), floor2);
      if (d2 > limit2) {
        foreground[i] = 1;
        ratio[i] = Math.sqrt(d2 / limit2);
        count++;
      } else {
        foreground[i] = 0;
        ratio[i] = 0;
      }
    }
    return count;
  }

  /**
   * Learns where the cleaned mask shows no motion, with the residual clipped to the threshold: speckle
   * the cleaning dropped (flapping tape, leaves) slowly raises its own threshold, yet one outlier cannot
   * blind a pixel. Pixels in motion for absorbFrames join the background.
   */
  private updateBackground(ws: Workspace, shift: number): void {
    const { gray, mean, variance, mask, framesInMotion } = ws;
    const { learningRate: rate, absorbFrames, sigmaFactor, minDifference } = this.options;
    for (let i = 0; i < gray.length; i++) {
      const value = gray[i] as number;
      if (mask[i] === 1) {
        const frames = (framesInMotion[i] as number) + 1;
        if (frames >= absorbFrames) {
          mean[i] = value - shift;
          framesInMotion[i] = 0;
        } else {
          framesInMotion[i] = frames;
        }
        continue;
      }
      framesInMotion[i] = 0;
      const v = variance[i] as number;
      const limit = Math.max(sigmaFactor * Math.sqrt(v), minDifference);
      const residual = Math.min(limit, Math.max(-limit, value - shift - (mean[i] as number)));
      // The mean takes the shift too, so a lasting light change is learned and the shift goes back to 0.
      mean[i] = (mean[i] as number) + rate * (residual + shift);
      variance[i] = v + rate * (residual * residual - v);
    }
  }

  /** Blobs of the cleaned mask as detections; the video path reports no area. */
  private blobs(ws: Workspace): Detection[] {
    const minArea = (this.options.minAreaFraction * ws.width * ws.height) / (ws.factor * ws.factor);
    return blobsOf(ws.mask, ws.ratio, ws, minArea, ws.visited, ws.queue).map(
      ({ x1, y1, x2, y2, score, classIndex }) => ({ x1, y1, x2, y2, score, classIndex }),
    );
  }
}

function allocateWorkspace(width: number, height: number, options: MotionOptions): Workspace {
  const factor = Math.max(1, Math.floor(width / options.workWidth));
  const cols = Math.max(1, Math.floor(width / factor));
  const rows = Math.max(1, Math.floor(height / factor));
  const n = cols * rows;
  return {
    width,
    height,
    factor,
    cols,
    rows,
    gray: new Float32Array(n),
    mean: new Float32Array(n),
    variance: new Float32Array(n),
    warmup: new Float32Array(n * options.warmupFrames),
    ratio: new Float32Array(n),
    framesInMotion: new Uint32Array(n),
    foreground: new Uint8Array(n),
    mask: new Uint8Array(n),
    spare: new Uint8Array(n),
    scratch: new Uint8Array(n),
    visited: new Uint8Array(n),
    queue: new Int32Array(n),
    rowSums: new Uint32Array(cols),
    shiftHistogram: new Uint32Array(511),
    samples: new Float32Array(options.warmupFrames),
  };
}

/**
 * Blocks of at least this many pixels a side are averaged on a 2-pixel lattice (every other row and
 * column): a quarter of the reads, still 4 to 36 samples a block, and skipping every other row
 * halves the memory read too. Reading every pixel cost 6 ms a 1080p frame, 1.2 with the lattice,
 * which at 5 fps is 2.4% of a core per camera, on every frame a resting camera looks at.
 */
const LATTICE_FROM_FACTOR = 4;

/** Average luma (BT.601 weights in 1/256) of factor x factor blocks; the remainder is left out. */
function toWorkingGray(frame: Frame, ws: Workspace): void {
  const { data, width } = frame;
  const { factor, cols, rows, gray, rowSums } = ws;
  const step = factor >= LATTICE_FROM_FACTOR ? 2 : 1;
  const samples = Math.ceil(factor / step);
  const scale = 1 / (samples * samples * 256);
  const rowBytes = width * 3;
  const blockBytes = factor * 3;
  const stepBytes = step * 3;
  for (let row = 0; row < rows; row++) {
    rowSums.fill(0);
    for (let sy = row * factor; sy < (row + 1) * factor; sy += step) {
      let p = sy * rowBytes;
      for (let col = 0; col < cols; col++) {
        const end = p + blockBytes;
        let sum = 0;
        for (; p < end; p += stepBytes)
          sum += 77 * (data[p] as number) + 150 * (data[p + 1] as number) + 29 * (data[p + 2] as number);
        p = end;
        rowSums[col] = (rowSums[col] as number) + sum;
      }
    }
    const base = row * cols;
    for (let col = 0; col < cols; col++) gray[base + col] = (rowSums[col] as number) * scale;
  }
}

/**
 * Background = per-pixel median of the warm-up frames, so objects that passed during warm-up leave no
 * ghost; variance from the median absolute deviation, robust to the same passers-by.
 */
function seedFromWarmup(ws: Workspace, frames: number): void {
  const { warmup, mean, variance, framesInMotion, samples } = ws;
  const middle = frames >> 1;
  for (let i = 0; i < mean.length; i++) {
    const base = i * frames;
    for (let k = 0; k < frames; k++) samples[k] = warmup[base + k] as number;
    samples.sort();
    const median = samples[middle] as number;
    for (let k = 0; k < frames; k++) samples[k] = Math.abs((samples[k] as number) - median);
    samples.sort();
    const sigma = 1.4826 * (samples[middle] as number);
    mean[i] = median;
    variance[i] = sigma * sigma;
    framesInMotion[i] = 0;
  }
}

/** Median of frame minus background: the frame-wide brightness change of a cloud or auto-exposure. */
function medianShift(ws: Workspace): number {
  const { gray, mean, shiftHistogram } = ws;
  shiftHistogram.fill(0);
  for (let i = 0; i < gray.length; i++) {
    // Clamped: the mean may overshoot 0..255 a little while it follows a large shift.
    const bin = Math.min(510, Math.max(0, Math.round((gray[i] as number) - (mean[i] as number)) + 255));
    shiftHistogram[bin] = (shiftHistogram[bin] as number) + 1;
  }
  const half = gray.length / 2;
  let seen = 0;
  for (let bin = 0; bin < shiftHistogram.length; bin++) {
    seen += shiftHistogram[bin] as number;
    if (seen >= half) return bin - 255;
  }
  return 0;
}
