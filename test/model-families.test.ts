import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageResult } from '../engine/contract';
import type { ModelInput } from '../engine/packages/manifest';
import { buildZapk } from '../engine/packages/zapk';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { constantModel, type GraphInput, type GraphOutput } from './helpers/onnx-graphs';

/**
 * Each model family's export layout end to end: a model answering known tensors in that layout
 * (test/helpers/onnx-graphs.ts) is packaged, installed (the install check runs it and counts its
 * classes against the labels), and analyses an uploaded 640x480 image; the person it "found" must
 * come back in the image's pixels.
 *
 * The found person, in the 320x320 model input: x1 40, y1 60, x2 120, y2 220, score 0.9, class 0,
 * beside a car scoring 0.1 (under every threshold). Undone by hand:
 * - letterboxed top-left (scale 320/640 = 0.5 on both axes): x1 80, y1 120, x2 240, y2 440, so the
 *   reported object is centre (160, 280), 160x320;
 * - stretched (x by 0.5, y by 320/480): x1 80, y1 90, x2 240, y2 330: centre (160, 210), 160x240.
 */

const SIDE = 320;
const LETTERBOXED = { x: 160, y: 280, w: 160, h: 320, score: 0.9 };
const STRETCHED = { x: 160, y: 210, w: 160, h: 240, score: 0.9 };
const LABELS = ['person', 'car'];
const logit = (p: number) => Math.log(p / (1 - p));

const YOLO_INPUT: ModelInput = {
  width: SIDE,
  height: SIDE,
  channel_order: 'RGB',
  scale: 1 / 255,
  mean: [0, 0, 0],
  std: [1, 1, 1],
  letterbox: 'top-left',
  pad_value: 114,
};
const DETR_INPUT: ModelInput = {
  ...YOLO_INPUT,
  mean: [0.485, 0.456, 0.406],
  std: [0.229, 0.224, 0.225],
  letterbox: 'stretch',
};
const images: GraphInput = { name: 'images', type: 'float32', dims: [1, 3, SIDE, SIDE] };

interface FamilyCase {
  family: string;
  input: ModelInput;
  inputs: GraphInput[];
  outputs: GraphOutput[];
  expected: typeof LETTERBOXED;
}

const CASES: FamilyCase[] = [
  {
    // YOLO26 / YOLOv10: [1, N, 6] rows x1, y1, x2, y2, score, class; NMS inside the model.
    family: 'yolo-e2e',
    input: YOLO_INPUT,
    inputs: [images],
    outputs: [
      {
        name: 'output0',
        type: 'float32',
        dims: [1, 3, 6],
        values: [40, 60, 120, 220, 0.9, 0, 0, 0, 10, 10, 0.1, 1],
      },
    ],
    expected: LETTERBOXED,
  },
  {
    // YOLOv9 as exported: [1, 4+C, N], rows cx, cy, w, h, then one row of scores per class.
    family: 'yolo-generic',
    input: YOLO_INPUT,
    inputs: [images],
    outputs: [
      {
        name: 'output0',
        type: 'float32',
        dims: [1, 6, 3],
        values: [80, 5, 0, 140, 5, 0, 80, 10, 0, 160, 10, 0, 0.9, 0, 0, 0.05, 0.1, 0],
      },
    ],
    expected: LETTERBOXED,
  },
  {
    // YOLO-NAS: boxes [1, N, 4] x1, y1, x2, y2 and class scores [1, N, C].
    family: 'yolonas',
    input: YOLO_INPUT,
    inputs: [{ ...images, name: 'input' }],
    outputs: [
      {
        name: 'graph2_flat_boxes',
        type: 'float32',
        dims: [1, 2, 4],
        values: [40, 60, 120, 220, 0, 0, 10, 10],
      },
      { name: 'graph2_flat_scores', type: 'float32', dims: [1, 2, 2], values: [0.9, 0.05, 0, 0.1] },
    ],
    expected: LETTERBOXED,
  },
  {
    // TensorFlow SSD: uint8 NHWC input; boxes ymin, xmin, ymax, xmax in 0..1; classes; scores; count.
    family: 'ssd',
    input: { ...YOLO_INPUT, layout: 'NHWC', dtype: 'uint8', scale: 1 },
    inputs: [{ name: 'image_tensor', type: 'uint8', dims: [1, SIDE, SIDE, 3] }],
    outputs: [
      {
        name: 'detection_boxes',
        type: 'float32',
        dims: [1, 2, 4],
        values: [60 / SIDE, 40 / SIDE, 220 / SIDE, 120 / SIDE, 0, 0, 0.1, 0.1],
      },
      { name: 'detection_classes', type: 'float32', dims: [1, 2], values: [0, 1] },
      { name: 'detection_scores', type: 'float32', dims: [1, 2], values: [0.9, 0.1] },
      { name: 'num_detections', type: 'float32', dims: [1], values: [2] },
    ],
    expected: LETTERBOXED,
  },
  {
    // Ultralytics RT-DETR: one [1, N, 4+C], boxes cx, cy, w, h in 0..1, scores 0..1; stretched input.
    family: 'rtdetr',
    input: DETR_INPUT,
    inputs: [images],
    outputs: [
      {
        name: 'output0',
        type: 'float32',
        dims: [1, 2, 6],
        values: [0.25, 140 / SIDE, 0.25, 0.5, 0.9, 0.05, 0.5, 0.5, 0.1, 0.1, 0, 0.1],
      },
    ],
    expected: STRETCHED,
  },
  {
    // RF-DETR: "dets" [1, N, 4] cx, cy, w, h in 0..1 and class logits "labels" [1, N, C].
    family: 'rfdetr',
    input: DETR_INPUT,
    inputs: [{ ...images, name: 'input' }],
    outputs: [
      {
        name: 'dets',
        type: 'float32',
        dims: [1, 2, 4],
        values: [0.25, 140 / SIDE, 0.25, 0.5, 0.5, 0.5, 0.1, 0.1],
      },
      { name: 'labels', type: 'float32', dims: [1, 2, 2], values: [logit(0.9), -5, -5, logit(0.1)] },
    ],
    expected: STRETCHED,
  },
  {
    // D-FINE: the frame size as an int64 input; labels int64, boxes x1, y1, x2, y2 in that size, scores.
    family: 'dfine',
    input: DETR_INPUT,
    inputs: [images, { name: 'orig_target_sizes', type: 'int64', dims: [1, 2] }],
    outputs: [
      { name: 'labels', type: 'int64', dims: [1, 2], values: [0, 1] },
      { name: 'boxes', type: 'float32', dims: [1, 2, 4], values: [40, 60, 120, 220, 0, 0, 10, 10] },
      { name: 'scores', type: 'float32', dims: [1, 2], values: [0.9, 0.1] },
    ],
    expected: STRETCHED,
  },
];

let t: TestEngine;
let dir: string;
let photo: Buffer;

beforeAll(async () => {
  t = await startTestEngine();
  dir = mkdtempSync(join(tmpdir(), 'vc-families-'));
  photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#506070' } })
    .png()
    .toBuffer();
});

afterAll(async () => t?.stop());

/** A package of one model of the case's family and one person app; its install status and envelope. */
async function install(c: FamilyCase, labels = LABELS, id = `fam-${c.family}`) {
  writeFileSync(join(dir, `${id}.onnx`), constantModel(c.inputs, c.outputs));
  const manifest = {
    format: 1,
    zapk_id: id,
    name: `${c.family} layout`,
    version: '1.0.0',
    models: {
      detector: {
        family: c.family,
        file: `${id}.onnx`,
        input: c.input,
        labels,
        score_threshold: 0.3,
        nms_iou: 0.45,
        class_agnostic_nms: false,
      },
    },
    apps: [
      {
        app_id: 'person',
        name: 'Person',
        type: 1,
        model: 'detector',
        rule: {
          interval: 1,
          classes: [
            { class_id: '0', name: 'person', color: '#ff3b30', threshold: 0.5, min_pixel: 0, max_pixel: 0 },
          ],
        },
        license_expire: 0,
        perpetual: true,
      },
    ],
  };
  const manifestPath = join(dir, `${id}.json`);
  writeFileSync(manifestPath, JSON.stringify(manifest));
  const zapk = join(dir, `${id}-${labels.length}.zapk`);
  await buildZapk(manifestPath, zapk);
  const form = new FormData();
  form.append('file', new Blob([readFileSync(zapk)]), `${id}.zapk`);
  return t.call('POST', '/api/zapk', { raw: { type: '', body: form } });
}

describe('model families, each layout end to end', () => {
  for (const c of CASES) {
    it(`${c.family}: installs, and its person comes back in the image's pixels`, async () => {
      const installed = await install(c);
      expect(installed.body.code, installed.body.msg).toBe(0);
      const started = await t.call('POST', '/api/task', {
        json: { mode: 'image', zapk_id: `fam-${c.family}`, app_ids: ['person'] },
      });
      expect(started.body.code, started.body.msg).toBe(0);
      const taskId = (started.body.data as { task_id: string }).task_id;
      const answer = await t.call('POST', `/api/task/${taskId}/image`, {
        raw: { type: 'image/png', body: new Uint8Array(photo) },
      });
      expect(answer.body.code, answer.body.msg).toBe(0);
      const result = answer.body.data as ImageResult;
      const objects = result.rules.find((rule) => rule.id === 'person:0')?.objects ?? [];
      expect(
        objects.map(({ x, y, w, h, score }) => ({ x, y, w, h, score: Math.round(score * 1000) / 1000 })),
      ).toEqual([c.expected]);
    }, 60_000);
  }

  it('refuses at install a model that scores another number of classes than the package lists', async () => {
    const rtdetr = CASES.find((c) => c.family === 'rtdetr') as FamilyCase;
    const answer = await install(rtdetr, ['person', 'car', 'bicycle'], 'three-labels');
    expect(answer.status).toBe(400);
    expect(answer.body.msg).toMatch(/scores 2 classes, but the package lists 3 labels/);
  }, 60_000);
});
