/**
 * Detectors whose outputs are boxes already (no anchor grid to decode): end-to-end YOLO (YOLO26,
 * YOLOv10), YOLO-NAS, SSD, and the DETR family (RT-DETR, RF-DETR, D-FINE). Each turns its outputs
 * into candidates in model-input pixels scoring at least the threshold; a layout it cannot read is
 * an error that says what it expected.
 */
import type { Candidate, InputSize } from './decode';
import { type OutputTensor, outputFor, rows, shapeText } from './outputs';

export type DirectFamily = 'yolo-e2e' | 'yolonas' | 'ssd' | 'rtdetr' | 'rfdetr' | 'dfine';

const at = (data: ArrayLike<number>, i: number) => data[i] as number;
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

function argmaxRow(data: ArrayLike<number>, from: number, count: number): [index: number, value: number] {
  let best = 0;
  let value = at(data, from);
  for (let i = 1; i < count; i++) {
    if (at(data, from + i) > value) {
      value = at(data, from + i);
      best = i;
    }
  }
  return [best, value];
}

/** A [1, N, K] output's K, or an error. */
function lastDim(output: OutputTensor, role: string): number {
  const [batch, n, k] = output.dims;
  if (output.dims.length !== 3 || batch !== 1 || n === undefined || k === undefined || k < 1)
    throw new Error(`the ${role} output "${output.name}" must be [1, N, K]; got ${shapeText(output.dims)}`);
  return k;
}

/** [1, N, 6]: x1, y1, x2, y2, score, class in input pixels, NMS done by the model. */
function yoloE2e(outputs: readonly OutputTensor[], threshold: number): Candidate[] {
  const output = outputFor(outputs, 'detections', [], 0);
  const n = rows(output, 6, 'detections');
  const { data } = output;
  const candidates: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const base = i * 6;
    const score = at(data, base + 4);
    if (score < threshold) continue;
    candidates.push({
      x1: at(data, base),
      y1: at(data, base + 1),
      x2: at(data, base + 2),
      y2: at(data, base + 3),
      score,
      classIndex: Math.round(at(data, base + 5)),
    });
  }
  return candidates;
}

/** Boxes [1, N, 4] x1, y1, x2, y2 in input pixels, and class scores [1, N, C]. */
function yoloNas(outputs: readonly OutputTensor[], threshold: number): Candidate[] {
  const boxes = outputFor(outputs, 'boxes', ['box', 'bbox'], 0);
  const scores = outputFor(outputs, 'class scores', ['score', 'cls', 'class'], 1);
  const n = rows(boxes, 4, 'boxes');
  const classes = lastDim(scores, 'class scores');
  if (rows(scores, classes, 'class scores') !== n)
    throw new Error(`boxes ${shapeText(boxes.dims)} and scores ${shapeText(scores.dims)} differ in N`);
  const candidates: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const [classIndex, score] = argmaxRow(scores.data, i * classes, classes);
    if (score < threshold) continue;
    const b = i * 4;
    const d = boxes.data;
    candidates.push({
      x1: at(d, b),
      y1: at(d, b + 1),
      x2: at(d, b + 2),
      y2: at(d, b + 3),
      score,
      classIndex,
    });
  }
  return candidates;
}

/**
 * TensorFlow's detection API export: boxes [1, N, 4] as ymin, xmin, ymax, xmax in 0..1, classes and
 * scores [1, N], and how many rows are detections. Class values index the package's labels as they are.
 */
function ssd(outputs: readonly OutputTensor[], input: InputSize, threshold: number): Candidate[] {
  const boxes = outputFor(outputs, 'boxes', ['box'], 0);
  const classes = outputFor(outputs, 'classes', ['class', 'label'], 1);
  const scores = outputFor(outputs, 'scores', ['score'], 2);
  const count = outputs.find((output) => output.name.toLowerCase().includes('num'));
  const n = Math.min(
    rows(boxes, 4, 'boxes'),
    rows(classes, 1, 'classes'),
    rows(scores, 1, 'scores'),
    count ? Math.max(0, Math.floor(at(count.data, 0))) : Number.POSITIVE_INFINITY,
  );
  const candidates: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const score = at(scores.data, i);
    if (score < threshold) continue;
    const b = i * 4;
    const d = boxes.data;
    candidates.push({
      x1: at(d, b + 1) * input.width,
      y1: at(d, b) * input.height,
      x2: at(d, b + 3) * input.width,
      y2: at(d, b + 2) * input.height,
      score,
      classIndex: Math.round(at(classes.data, i)),
    });
  }
  return candidates;
}

/** cx, cy, w, h in 0..1 of the input, as DETR models give them, to input pixels. */
function fromNormalisedCentre(d: ArrayLike<number>, b: number, input: InputSize) {
  const cx = at(d, b) * input.width;
  const cy = at(d, b + 1) * input.height;
  const w = at(d, b + 2) * input.width;
  const h = at(d, b + 3) * input.height;
  return { x1: cx - w / 2, y1: cy - h / 2, x2: cx + w / 2, y2: cy + h / 2 };
}

/** Ultralytics' RT-DETR export: one [1, N, 4+C] output, boxes normalised cx, cy, w, h, class scores 0..1. */
function rtdetr(outputs: readonly OutputTensor[], input: InputSize, threshold: number): Candidate[] {
  const output = outputFor(outputs, 'detections', [], 0);
  const columns = lastDim(output, 'detections');
  if (columns < 5)
    throw new Error(`the detections output must be [1, N, 4+C]; got ${shapeText(output.dims)}`);
  const n = rows(output, columns, 'detections');
  const candidates: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const base = i * columns;
    const [classIndex, score] = argmaxRow(output.data, base + 4, columns - 4);
    if (score < threshold) continue;
    candidates.push({ ...fromNormalisedCentre(output.data, base, input), score, classIndex });
  }
  return candidates;
}

/** RF-DETR: boxes "dets" [1, N, 4] normalised cx, cy, w, h, and class logits "labels" [1, N, C]. */
function rfdetr(outputs: readonly OutputTensor[], input: InputSize, threshold: number): Candidate[] {
  const boxes = outputFor(outputs, 'boxes', ['det', 'box'], 0);
  const logits = outputFor(outputs, 'class logits', ['label', 'logit'], 1);
  const n = rows(boxes, 4, 'boxes');
  const classes = lastDim(logits, 'class logits');
  if (rows(logits, classes, 'class logits') !== n)
    throw new Error(`boxes ${shapeText(boxes.dims)} and logits ${shapeText(logits.dims)} differ in N`);
  const candidates: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const [classIndex, logit] = argmaxRow(logits.data, i * classes, classes);
    const score = sigmoid(logit);
    if (score < threshold) continue;
    candidates.push({ ...fromNormalisedCentre(boxes.data, i * 4, input), score, classIndex });
  }
  return candidates;
}

/**
 * D-FINE (and RT-DETR's original export): labels [1, N] (int64), boxes [1, N, 4] x1, y1, x2, y2 in
 * the pixels of its orig_target_sizes input (the engine gives the input size), scores [1, N].
 */
function dfine(outputs: readonly OutputTensor[], threshold: number): Candidate[] {
  const labels = outputFor(outputs, 'labels', ['label'], 0);
  const boxes = outputFor(outputs, 'boxes', ['box'], 1);
  const scores = outputFor(outputs, 'scores', ['score'], 2);
  const n = Math.min(rows(labels, 1, 'labels'), rows(boxes, 4, 'boxes'), rows(scores, 1, 'scores'));
  const candidates: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const score = at(scores.data, i);
    if (score < threshold) continue;
    const b = i * 4;
    const d = boxes.data;
    candidates.push({
      x1: at(d, b),
      y1: at(d, b + 1),
      x2: at(d, b + 2),
      y2: at(d, b + 3),
      score,
      classIndex: Math.round(at(labels.data, i)),
    });
  }
  return candidates;
}

export function decodeDirect(
  family: DirectFamily,
  outputs: readonly OutputTensor[],
  input: InputSize,
  threshold: number,
): Candidate[] {
  switch (family) {
    case 'yolo-e2e':
      return yoloE2e(outputs, threshold);
    case 'yolonas':
      return yoloNas(outputs, threshold);
    case 'ssd':
      return ssd(outputs, input, threshold);
    case 'rtdetr':
      return rtdetr(outputs, input, threshold);
    case 'rfdetr':
      return rfdetr(outputs, input, threshold);
    case 'dfine':
      return dfine(outputs, threshold);
  }
}

/**
 * How many classes the outputs score, to check a package's labels at install; null where the model
 * gives class ids instead of a score per class (the labels then cannot be counted from it).
 */
export function directClassCount(family: DirectFamily, outputs: readonly OutputTensor[]): number | null {
  switch (family) {
    case 'yolonas':
      return lastDim(outputFor(outputs, 'class scores', ['score', 'cls', 'class'], 1), 'class scores');
    case 'rtdetr':
      return lastDim(outputFor(outputs, 'detections', [], 0), 'detections') - 4;
    case 'rfdetr':
      return lastDim(outputFor(outputs, 'class logits', ['label', 'logit'], 1), 'class logits');
    default:
      return null;
  }
}
