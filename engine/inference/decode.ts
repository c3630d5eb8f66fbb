import type { Box } from '../vision/types';
import { type DirectFamily, decodeDirect, directClassCount } from './decode-direct';
import type { OnnxFamily } from './families';
import { type OutputTensor, outputFor, shapeText } from './outputs';

/** A box before NMS, in model-input pixels. */
export interface Candidate extends Box {
  score: number;
  classIndex: number;
}

export interface InputSize {
  width: number;
  height: number;
}

/** The three detection heads (P3, P4, P5) of the YOLOX export, in output row order. */
const YOLOX_STRIDES = [8, 16, 32] as const;

/** The families whose one output is an anchor grid or a list of anchors (decoded here). */
type GridFamily = 'yolox' | 'yolov5' | 'yolov8';

const isDirect = (family: OnnxFamily): family is DirectFamily =>
  family !== 'yolox' && family !== 'yolov5' && family !== 'yolov8' && family !== 'yolo-generic';

/**
 * Turns a detector's outputs into candidate boxes in model-input pixels, keeping those scoring at
 * least scoreThreshold. `classes` is how many labels the package lists (generic YOLO tells its
 * layouts apart by it). Throws on outputs the family does not produce.
 */
export function decodeOutputs(
  family: OnnxFamily,
  outputs: readonly OutputTensor[],
  input: InputSize,
  classes: number,
  scoreThreshold: number,
): Candidate[] {
  if (isDirect(family)) return decodeDirect(family, outputs, input, scoreThreshold);
  const output = outputFor(outputs, 'detections', [], 0);
  const data = output.data instanceof Float32Array ? output.data : Float32Array.from(output.data);
  if (family === 'yolo-generic') return decodeGeneric(data, output.dims, classes, scoreThreshold);
  return decodeOutput(family, data, output.dims, input, scoreThreshold);
}

/**
 * How many classes the outputs of this family score, so a package's labels can be checked against
 * its model at install; null where the model gives class ids (the check is then left to the labels).
 */
export function outputClassCount(
  family: OnnxFamily,
  outputs: readonly OutputTensor[],
  labels: number,
): number | null {
  if (isDirect(family)) return directClassCount(family, outputs);
  const { dims } = outputFor(outputs, 'detections', [], 0);
  if (family !== 'yolo-generic') return classCount(family, dims);
  // Either layout fits when a side makes it one; otherwise say what the smaller side would need.
  const fits = [dims[1], dims[2]].some((side) => side === 4 + labels || side === 5 + labels);
  return fits ? labels : Math.min(dims[1] ?? 0, dims[2] ?? 0) - 4;
}

/** One output tensor of a grid family to candidates. */
export function decodeOutput(
  family: GridFamily,
  data: Float32Array,
  dims: readonly number[],
  input: InputSize,
  scoreThreshold: number,
): Candidate[] {
  const expected = dims.reduce((product, d) => product * d, 1);
  if (data.length !== expected) {
    throw new Error(
      `${family} output holds ${data.length} values but its shape ${shapeText(dims)} needs ${expected}`,
    );
  }
  switch (family) {
    case 'yolox':
      return decodeYolox(data, dims, input, scoreThreshold);
    case 'yolov5':
      return decodeYolov5(data, dims, scoreThreshold);
    case 'yolov8':
      return decodeYolov8(data, dims, scoreThreshold);
  }
}

/**
 * How many classes an output of this family and shape scores, so a package's labels can be checked
 * against its model at install; decodeOutput refuses the shapes this cannot read.
 */
export function classCount(family: GridFamily, dims: readonly number[]): number {
  const [, first = 0, second = 0] = dims;
  return family === 'yolov8' ? Math.min(first, second) - 4 : second - 5;
}

/** [rows, columns] of a [1, rows, columns] output with at least minColumns columns, or null. */
function rowsAndColumns(dims: readonly number[], minColumns: number): [number, number] | null {
  const [batch, rows, columns] = dims;
  if (dims.length !== 3 || batch !== 1 || rows === undefined || columns === undefined) return null;
  return rows >= 1 && columns >= minColumns ? [rows, columns] : null;
}

/** Index (from 0) of the largest of count consecutive values starting at data[from]. */
function argmax(data: Float32Array, from: number, count: number): number {
  let best = 0;
  let bestValue = data[from] as number;
  for (let i = 1; i < count; i++) {
    const value = data[from + i] as number;
    if (value > bestValue) {
      bestValue = value;
      best = i;
    }
  }
  return best;
}

function centredBox(
  cx: number,
  cy: number,
  w: number,
  h: number,
  score: number,
  classIndex: number,
): Candidate {
  return { x1: cx - w / 2, y1: cy - h / 2, x2: cx + w / 2, y2: cy + h / 2, score, classIndex };
}

/** Rows are grid cells, level by level (strides 8, 16, 32), row-major; boxes are still grid offsets. */
function decodeYolox(
  data: Float32Array,
  dims: readonly number[],
  input: InputSize,
  threshold: number,
): Candidate[] {
  const shape = rowsAndColumns(dims, 6);
  if (!shape) throw new Error(`yolox output must be [1, N, 5+C]; got ${shapeText(dims)}`);
  const [rows, columns] = shape;
  const levels = YOLOX_STRIDES.map((stride) => ({
    stride,
    gridWidth: Math.floor(input.width / stride),
    gridHeight: Math.floor(input.height / stride),
  }));
  const anchors = levels.reduce((sum, level) => sum + level.gridWidth * level.gridHeight, 0);
  if (rows !== anchors) {
    const grids = levels.map((level) => `${level.gridWidth}x${level.gridHeight}`).join(' + ');
    throw new Error(
      `yolox output has ${rows} rows but a ${input.width}x${input.height} input has ${anchors} anchor points (${grids} at strides 8, 16, 32)`,
    );
  }

  const classes = columns - 5;
  const candidates: Candidate[] = [];
  let row = 0;
  for (const { stride, gridWidth, gridHeight } of levels) {
    for (let gy = 0; gy < gridHeight; gy++) {
      for (let gx = 0; gx < gridWidth; gx++, row++) {
        const base = row * columns;
        const objectness = data[base + 4] as number;
        // Class scores are at most 1, so the score cannot beat the objectness.
        if (objectness < threshold) continue;
        const classIndex = argmax(data, base + 5, classes);
        const score = objectness * (data[base + 5 + classIndex] as number);
        if (score < threshold) continue;
        candidates.push(
          centredBox(
            ((data[base] as number) + gx) * stride,
            ((data[base + 1] as number) + gy) * stride,
            Math.exp(data[base + 2] as number) * stride,
            Math.exp(data[base + 3] as number) * stride,
            score,
            classIndex,
          ),
        );
      }
    }
  }
  return candidates;
}

/** Rows are anchors already decoded to input pixels: [cx, cy, w, h, obj, cls...]. */
function decodeYolov5(data: Float32Array, dims: readonly number[], threshold: number): Candidate[] {
  const shape = rowsAndColumns(dims, 6);
  if (!shape) throw new Error(`yolov5 output must be [1, N, 5+C]; got ${shapeText(dims)}`);
  const [rows, columns] = shape;
  const classes = columns - 5;
  const candidates: Candidate[] = [];
  for (let base = 0; base < rows * columns; base += columns) {
    const objectness = data[base + 4] as number;
    if (objectness < threshold) continue;
    const classIndex = argmax(data, base + 5, classes);
    const score = objectness * (data[base + 5 + classIndex] as number);
    if (score < threshold) continue;
    candidates.push(
      centredBox(
        data[base] as number,
        data[base + 1] as number,
        data[base + 2] as number,
        data[base + 3] as number,
        score,
        classIndex,
      ),
    );
  }
  return candidates;
}

// Per-anchor running maximum for the channels-first layout; grown on demand, reused across frames.
let bestScores = new Float32Array(0);
let bestClasses = new Uint16Array(0);

/**
 * [1, 4+C, N]: rows cx, cy, w, h, then one row per class, no objectness. The transposed [1, N, 4+C]
 * export is told apart by shape: a detector has far more anchors than classes, so equal sides are refused.
 */
function decodeYolov8(data: Float32Array, dims: readonly number[], threshold: number): Candidate[] {
  const [batch, first, second] = dims;
  if (
    dims.length !== 3 ||
    batch !== 1 ||
    first === undefined ||
    second === undefined ||
    first === second ||
    Math.min(first, second) < 5
  ) {
    throw new Error(`yolov8 output must be [1, 4+C, N] or [1, N, 4+C] with N > 4+C; got ${shapeText(dims)}`);
  }
  return first < second
    ? decodeChannelsFirst(data, first - 4, second, threshold)
    : decodeAnchorsFirst(data, second - 4, first, threshold);
}

/** Walks class rows in memory order, keeping each anchor's best class, instead of striding by N per anchor. */
function decodeChannelsFirst(data: Float32Array, classes: number, anchors: number, threshold: number) {
  if (bestScores.length < anchors) {
    bestScores = new Float32Array(anchors);
    bestClasses = new Uint16Array(anchors);
  }
  bestScores.set(data.subarray(4 * anchors, 5 * anchors));
  bestClasses.fill(0, 0, anchors);
  for (let c = 1; c < classes; c++) {
    const row = (4 + c) * anchors;
    for (let n = 0; n < anchors; n++) {
      const value = data[row + n] as number;
      if (value > (bestScores[n] as number)) {
        bestScores[n] = value;
        bestClasses[n] = c;
      }
    }
  }
  const candidates: Candidate[] = [];
  for (let n = 0; n < anchors; n++) {
    const score = bestScores[n] as number;
    if (score < threshold) continue;
    candidates.push(
      centredBox(
        data[n] as number,
        data[anchors + n] as number,
        data[2 * anchors + n] as number,
        data[3 * anchors + n] as number,
        score,
        bestClasses[n] as number,
      ),
    );
  }
  return candidates;
}

function decodeAnchorsFirst(data: Float32Array, classes: number, anchors: number, threshold: number) {
  const columns = 4 + classes;
  const candidates: Candidate[] = [];
  for (let base = 0; base < anchors * columns; base += columns) {
    const classIndex = argmax(data, base + 4, classes);
    const score = data[base + 4 + classIndex] as number;
    if (score < threshold) continue;
    candidates.push(
      centredBox(
        data[base] as number,
        data[base + 1] as number,
        data[base + 2] as number,
        data[base + 3] as number,
        score,
        classIndex,
      ),
    );
  }
  return candidates;
}

/**
 * Generic YOLO (v3, v4, v7, v9 and others' exports): [1, 4+C, N] or [1, N, 4+C] without objectness
 * (v8 layout), or [1, 5+C, N] or [1, N, 5+C] with it (v5 layout), C being the package's labels.
 */
function decodeGeneric(data: Float32Array, dims: readonly number[], classes: number, threshold: number) {
  const [batch, first, second] = dims;
  if (dims.length === 3 && batch === 1 && first !== undefined && second !== undefined && classes > 0) {
    if (first === 4 + classes && second !== first)
      return decodeChannelsFirst(data, classes, second, threshold);
    if (second === 4 + classes) return decodeAnchorsFirst(data, classes, first, threshold);
    if (second === 5 + classes) return decodeYolov5(data, dims, threshold);
    if (first === 5 + classes)
      return decodeYolov5(transpose(data, first, second), [1, second, first], threshold);
  }
  throw new Error(
    `yolo-generic output for ${classes} labels must be [1, ${4 + classes}|${5 + classes}, N] or [1, N, ${4 + classes}|${5 + classes}]; got ${shapeText(dims)}`,
  );
}

/** [rows, columns] row-major to [columns, rows]. */
function transpose(data: Float32Array, rowCount: number, columnCount: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rowCount; r++)
    for (let c = 0; c < columnCount; c++) out[c * rowCount + r] = data[r * columnCount + c] as number;
  return out;
}
