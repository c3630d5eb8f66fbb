import type { ModelInput } from '../packages/manifest';
import type { Box, Frame } from '../vision/types';

/** Where the resized frame sits in the model input: model px = source px * scale + pad, per axis. */
export interface LetterboxInfo {
  scaleX: number;
  scaleY: number;
  padX: number;
  padY: number;
}

export interface Letterboxed extends LetterboxInfo {
  /** NCHW float32 [1, 3, input.height, input.width]. */
  tensor: Float32Array;
}

/** The model input's layout and element type; NCHW float32 unless the manifest says otherwise. */
export const inputLayout = (input: ModelInput) => ({
  layout: input.layout ?? 'NCHW',
  dtype: input.dtype ?? 'float32',
});

/**
 * Bilinear sampling tables for one (source size, input size, placement), in OpenCV INTER_LINEAR
 * convention (pixel centres, edge clamped), which is what the YOLO families were trained with.
 * Offsets are byte offsets into the packed RGB source; each weight is that of the second sample.
 */
interface Geometry extends LetterboxInfo {
  resizedWidth: number;
  resizedHeight: number;
  left: Int32Array;
  right: Int32Array;
  xWeight: Float32Array;
  top: Int32Array;
  bottom: Int32Array;
  yWeight: Float32Array;
}

// A few entries: a task sees one frame size, a worker at most a handful of sources.
const GEOMETRY_CACHE_SIZE = 8;
const geometryCache = new Map<string, Geometry>();

function axisTable(srcSize: number, dstSize: number, stride: number) {
  const first = new Int32Array(dstSize);
  const second = new Int32Array(dstSize);
  const weight = new Float32Array(dstSize);
  const ratio = srcSize / dstSize;
  for (let d = 0; d < dstSize; d++) {
    const position = Math.max(0, (d + 0.5) * ratio - 0.5);
    const index = Math.min(Math.floor(position), srcSize - 1);
    first[d] = index * stride;
    second[d] = Math.min(index + 1, srcSize - 1) * stride;
    weight[d] = index === srcSize - 1 ? 0 : position - index;
  }
  return { first, second, weight };
}

function geometryFor(srcWidth: number, srcHeight: number, input: ModelInput): Geometry {
  const key = `${srcWidth}x${srcHeight}>${input.width}x${input.height}:${input.letterbox}`;
  const cached = geometryCache.get(key);
  if (cached) return cached;

  // The DETR family is trained on frames stretched to its input; the YOLO families keep the aspect.
  const stretch = input.letterbox === 'stretch';
  const scale = Math.min(input.width / srcWidth, input.height / srcHeight);
  // At least one pixel, for absurd aspect ratios such as a 4000x1 strip.
  const resizedWidth = stretch ? input.width : Math.max(1, Math.round(srcWidth * scale));
  const resizedHeight = stretch ? input.height : Math.max(1, Math.round(srcHeight * scale));
  const centred = input.letterbox === 'center';
  const columns = axisTable(srcWidth, resizedWidth, 3);
  const rows = axisTable(srcHeight, resizedHeight, srcWidth * 3);
  const geometry: Geometry = {
    scaleX: stretch ? input.width / srcWidth : scale,
    scaleY: stretch ? input.height / srcHeight : scale,
    padX: centred ? Math.floor((input.width - resizedWidth) / 2) : 0,
    padY: centred ? Math.floor((input.height - resizedHeight) / 2) : 0,
    resizedWidth,
    resizedHeight,
    left: columns.first,
    right: columns.second,
    xWeight: columns.weight,
    top: rows.first,
    bottom: rows.second,
    yWeight: rows.weight,
  };
  if (geometryCache.size >= GEOMETRY_CACHE_SIZE) {
    geometryCache.delete(geometryCache.keys().next().value as string);
  }
  geometryCache.set(key, geometry);
  return geometry;
}

/**
 * Resizes the frame into the model input keeping its aspect ratio, pads with pad_value and
 * normalises each value to (v * scale - mean[c]) / std[c]. Pass `out` to reuse a tensor.
 */
export function letterbox(frame: Frame, input: ModelInput, out?: Float32Array): Letterboxed {
  const { width, height } = input;
  const planeSize = width * height;
  if (frame.data.length !== frame.width * frame.height * 3) {
    throw new Error(
      `frame data holds ${frame.data.length} bytes; ${frame.width}x${frame.height} RGB needs ${frame.width * frame.height * 3}`,
    );
  }
  const tensor = out ?? new Float32Array(3 * planeSize);
  if (tensor.length !== 3 * planeSize) {
    throw new Error(
      `output tensor holds ${tensor.length} floats; [1,3,${height},${width}] needs ${3 * planeSize}`,
    );
  }
  const g = geometryFor(frame.width, frame.height, input);

  // Normalisation is affine, so it commutes with the interpolation: v * gain + offset per source channel.
  const gain = [0, 1, 2].map((c) => input.scale / (input.std[c] as number));
  const offset = [0, 1, 2].map((c) => -(input.mean[c] as number) / (input.std[c] as number));
  // Plane offset of source channel R, G, B in the tensor.
  const plane = input.channel_order === 'RGB' ? [0, planeSize, 2 * planeSize] : [2 * planeSize, planeSize, 0];
  for (let c = 0; c < 3; c++) {
    const start = plane[c] as number;
    tensor.fill(input.pad_value * (gain[c] as number) + (offset[c] as number), start, start + planeSize);
  }

  const [gainR, gainG, gainB] = gain as [number, number, number];
  const [offsetR, offsetG, offsetB] = offset as [number, number, number];
  const [planeR, planeG, planeB] = plane as [number, number, number];
  const src = frame.data;
  const { left, right, xWeight, top, bottom, yWeight, resizedWidth, resizedHeight } = g;
  for (let y = 0; y < resizedHeight; y++) {
    const upper = top[y] as number;
    const lower = bottom[y] as number;
    const wy = yWeight[y] as number;
    let o = (y + g.padY) * width + g.padX;
    for (let x = 0; x < resizedWidth; x++, o++) {
      const wx = xWeight[x] as number;
      const a = upper + (left[x] as number);
      const b = upper + (right[x] as number);
      const c = lower + (left[x] as number);
      const d = lower + (right[x] as number);
      const rTop = (src[a] as number) + ((src[b] as number) - (src[a] as number)) * wx;
      const rBottom = (src[c] as number) + ((src[d] as number) - (src[c] as number)) * wx;
      const gTop = (src[a + 1] as number) + ((src[b + 1] as number) - (src[a + 1] as number)) * wx;
      const gBottom = (src[c + 1] as number) + ((src[d + 1] as number) - (src[c + 1] as number)) * wx;
      const bTop = (src[a + 2] as number) + ((src[b + 2] as number) - (src[a + 2] as number)) * wx;
      const bBottom = (src[c + 2] as number) + ((src[d + 2] as number) - (src[c + 2] as number)) * wx;
      tensor[planeR + o] = (rTop + (rBottom - rTop) * wy) * gainR + offsetR;
      tensor[planeG + o] = (gTop + (gBottom - gTop) * wy) * gainG + offsetG;
      tensor[planeB + o] = (bTop + (bBottom - bTop) * wy) * gainB + offsetB;
    }
  }
  return { tensor, scaleX: g.scaleX, scaleY: g.scaleY, padX: g.padX, padY: g.padY };
}

/**
 * The same resize into an NHWC input (TensorFlow exports such as SSD): interleaved, normalised
 * floats, or the raw 0..255 values for a uint8 input (which takes no normalisation).
 */
export function letterboxInterleaved(
  frame: Frame,
  input: ModelInput,
  out: Float32Array | Uint8Array,
): LetterboxInfo {
  const { width, height } = input;
  if (out.length !== 3 * width * height) {
    throw new Error(
      `output tensor holds ${out.length} values; [1,${height},${width},3] needs ${3 * width * height}`,
    );
  }
  const g = geometryFor(frame.width, frame.height, input);
  const raw = out instanceof Uint8Array;
  const gain = [0, 1, 2].map((c) => (raw ? 1 : input.scale / (input.std[c] as number)));
  const offset = [0, 1, 2].map((c) => (raw ? 0 : -(input.mean[c] as number) / (input.std[c] as number)));
  // Source channel c goes to slot order[c] of each pixel.
  const order = input.channel_order === 'RGB' ? [0, 1, 2] : [2, 1, 0];
  for (let i = 0; i < width * height; i++)
    for (let c = 0; c < 3; c++)
      out[i * 3 + (order[c] as number)] = input.pad_value * (gain[c] as number) + (offset[c] as number);
  const src = frame.data;
  for (let y = 0; y < g.resizedHeight; y++) {
    const upper = g.top[y] as number;
    const lower = g.bottom[y] as number;
    const wy = g.yWeight[y] as number;
    for (let x = 0; x < g.resizedWidth; x++) {
      const wx = g.xWeight[x] as number;
      const o = ((y + g.padY) * width + x + g.padX) * 3;
      for (let c = 0; c < 3; c++) {
        const a = src[upper + (g.left[x] as number) + c] as number;
        const b = src[upper + (g.right[x] as number) + c] as number;
        const d = src[lower + (g.left[x] as number) + c] as number;
        const e = src[lower + (g.right[x] as number) + c] as number;
        const top = a + (b - a) * wx;
        const value = top + (d + (e - d) * wx - top) * wy;
        out[o + (order[c] as number)] = value * (gain[c] as number) + (offset[c] as number);
      }
    }
  }
  return { scaleX: g.scaleX, scaleY: g.scaleY, padX: g.padX, padY: g.padY };
}

/** Maps a box in model-input pixels back to source-frame pixels, clipped to the frame. */
export function undoLetterbox(box: Box, info: LetterboxInfo, frameWidth: number, frameHeight: number): Box {
  const clip = (v: number, max: number) => Math.min(Math.max(v, 0), max);
  return {
    x1: clip((box.x1 - info.padX) / info.scaleX, frameWidth),
    y1: clip((box.y1 - info.padY) / info.scaleY, frameHeight),
    x2: clip((box.x2 - info.padX) / info.scaleX, frameWidth),
    y2: clip((box.y2 - info.padY) / info.scaleY, frameHeight),
  };
}
