import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tileStarts } from '../engine/change/change-model';
import { ERRORS } from '../engine/contract/errors';
import type { ImageResult } from '../engine/events/schema';
import { changeProbabilities } from '../engine/inference/change-map';
import { iou } from '../engine/inference/nms';
import type { ModelInput, ModelSpec } from '../engine/packages/manifest';
import { buildZapk } from '../engine/packages/zapk';
import type { Box } from '../engine/vision/types';
import { type Answer, FIXTURES, startTestEngine, type TestEngine } from './helpers/engine';
import { constantModel, type SiameseOptions, siameseChangeModel } from './helpers/onnx-graphs';

/**
 * ONNX change models (family siamese-change) end to end: a package whose model is a small siamese
 * graph (test/helpers/onnx-graphs.ts: a pixel changed where A and B differ by more than 0.3 summed
 * over the channels, in 0..1 values) is installed through the API and runs diff tasks on leuvenB.jpg
 * with a patch of basketball1.png pasted in; the one region found must be the patch. Models of
 * another layout are refused at install like any wrong model.
 */

const LEUVEN = readFileSync(join(FIXTURES, 'media', 'leuvenB.jpg'));
const BASKETBALL = readFileSync(join(FIXTURES, 'media', 'basketball1.png'));
/** Where the patch is pasted into image_b, in its pixels (leuvenB is 751 x 563). */
const PASTED: Box = { x1: 380, y1: 240, x2: 490, y2: 330 };
const SIAMESE: SiameseOptions = { output: 'probability', gain: 20, threshold: 0.3 };

const inputOf = (width: number, height: number): ModelInput => ({
  width,
  height,
  channel_order: 'RGB',
  scale: 1 / 255,
  mean: [0, 0, 0],
  std: [1, 1, 1],
  letterbox: 'top-left',
  pad_value: 0,
});

let t: TestEngine;
let dir: string;
let after: Buffer;

beforeAll(async () => {
  t = await startTestEngine();
  dir = mkdtempSync(join(tmpdir(), 'vc-change-models-'));
  const patch = await sharp(BASKETBALL)
    .extract({ left: 100, top: 80, width: PASTED.x2 - PASTED.x1, height: PASTED.y2 - PASTED.y1 })
    .png()
    .toBuffer();
  after = await sharp(LEUVEN)
    .composite([{ input: patch, left: PASTED.x1, top: PASTED.y1 }])
    .jpeg({ quality: 95 })
    .toBuffer();
});

afterAll(async () => t?.stop());

/** A package of one siamese-change model and one change app "change"; the install's answer. */
async function install(id: string, model: Uint8Array, spec: Partial<ModelSpec>): Promise<Answer> {
  writeFileSync(join(dir, `${id}.onnx`), model);
  const manifest = {
    format: 1,
    zapk_id: id,
    name: 'Siamese change',
    version: '1.0.0',
    models: {
      siamese: {
        family: 'siamese-change',
        file: `${id}.onnx`,
        labels: ['change'],
        score_threshold: 0.5,
        nms_iou: 0.5,
        class_agnostic_nms: true,
        ...spec,
      },
    },
    apps: [
      {
        app_id: 'change',
        name: 'Change',
        type: 2,
        model: 'siamese',
        rule: {
          interval: 0,
          classes: [
            { class_id: '0', name: 'change', color: '#ff3b30', threshold: 0.5, min_pixel: 0, max_pixel: 0 },
          ],
        },
        license_expire: 0,
        perpetual: true,
      },
    ],
  };
  const manifestPath = join(dir, `${id}.json`);
  writeFileSync(manifestPath, JSON.stringify(manifest));
  const zapk = join(dir, `${id}.zapk`);
  await buildZapk(manifestPath, zapk);
  const form = new FormData();
  form.append('file', new Blob([readFileSync(zapk)]), `${id}.zapk`);
  return t.call('POST', '/api/zapk', { raw: { type: '', body: form } });
}

/** A diff task on the installed package's change app, given the pair; the engine's answer. */
async function diff(id: string, pair: { image_a: Buffer; image_b: Buffer }): Promise<Answer> {
  const started = await t.call('POST', '/api/task', {
    json: { mode: 'diff', zapk_id: id, app_ids: ['change'] },
  });
  expect(started.body.code, started.body.msg).toBe(0);
  const taskId = (started.body.data as { task_id: string }).task_id;
  const form = new FormData();
  for (const [name, bytes] of Object.entries(pair))
    form.append(name, new Blob([new Uint8Array(bytes)]), `${name}.jpg`);
  return t.call('POST', `/api/task/${taskId}/diff_image`, { raw: { type: '', body: form } });
}

/** The boxes of the change rule that fired on the pair. */
async function changedBoxes(id: string, pair: { image_a: Buffer; image_b: Buffer }): Promise<Box[]> {
  const answer = await diff(id, pair);
  expect(answer.body.code, answer.body.msg).toBe(0);
  const objects = (answer.body.data as ImageResult).rules.find((rule) => rule.id === 'change:0')?.objects;
  return (objects ?? []).map(({ x, y, w, h }) => ({
    x1: x - w / 2,
    y1: y - h / 2,
    x2: x + w / 2,
    y2: y + h / 2,
  }));
}

describe('change maps and tiles', () => {
  const input = inputOf(2, 1);
  const round = (values: Float32Array) => Array.from(values, (v) => Math.round(v * 1000) / 1000);

  it('reads each output layout as the probability of change per pixel', () => {
    const one = [{ name: 'change', dims: [1, 1, 1, 2], data: [0.2, 0.9] }];
    expect(round(changeProbabilities(one, input))).toEqual([0.2, 0.9]);
    expect(round(changeProbabilities(one, input, 'logits'))).toEqual([0.55, 0.711]);
    // Two classes: channel 0 "unchanged", channel 1 "changed".
    const two = [{ name: 'change', dims: [1, 2, 1, 2], data: [0.8, 0.1, 0.2, 0.9] }];
    expect(round(changeProbabilities(two, input))).toEqual([0.2, 0.9]);
    expect(round(changeProbabilities(two, input, 'logits'))).toEqual([0.354, 0.69]);
    expect(() => changeProbabilities([{ name: 'x', dims: [1, 1, 2, 2], data: [0, 0, 0, 0] }], input)).toThrow(
      'outputs [1,1,2,2]; a change model outputs [1,1,1,2] or [1,2,1,2]',
    );
  });

  it('lays tiles a quarter over each other, the last flush with the edge, one for a short side', () => {
    expect(tileStarts(751, 256, 0.25)).toEqual([0, 192, 384, 495]);
    expect(tileStarts(512, 256, 0.25)).toEqual([0, 192, 256]);
    expect(tileStarts(256, 256, 0.25)).toEqual([0]);
    expect(tileStarts(100, 256, 0.25)).toEqual([0]);
  });
});

describe('ONNX change models (siamese-change)', () => {
  it('installs, and finds the pasted patch in one tile larger than the image, nothing in an identical pair', async () => {
    const installed = await install('siamese-one-tile', siameseChangeModel(SIAMESE), {
      input: inputOf(800, 608),
    });
    expect(installed.body.code, installed.body.msg).toBe(0);
    const boxes = await changedBoxes('siamese-one-tile', { image_a: LEUVEN, image_b: after });
    expect(boxes).toHaveLength(1);
    expect(iou(boxes[0] as Box, PASTED)).toBeGreaterThanOrEqual(0.5);
    expect(await changedBoxes('siamese-one-tile', { image_a: LEUVEN, image_b: LEUVEN })).toEqual([]);
  }, 60_000);

  it('tiles an image larger than the model input (two-class logits), after a camera shift', async () => {
    const installed = await install(
      'siamese-tiled',
      siameseChangeModel({ ...SIAMESE, output: 'two-class-logits' }),
      { input: inputOf(256, 256), change_output: 'logits' },
    );
    expect(installed.body.code, installed.body.msg).toBe(0);
    // The camera moved 3 px right and 2 down before the patch was pasted: registration undoes it.
    const { width = 0, height = 0 } = await sharp(LEUVEN).metadata();
    const shifted = await sharp(after)
      .extend({ left: 3, top: 2, extendWith: 'copy' })
      .extract({ left: 0, top: 0, width, height })
      .jpeg({ quality: 95 })
      .toBuffer();
    const boxes = await changedBoxes('siamese-tiled', { image_a: LEUVEN, image_b: shifted });
    expect(boxes).toHaveLength(1);
    const moved = { x1: PASTED.x1 + 3, y1: PASTED.y1 + 2, x2: PASTED.x2 + 3, y2: PASTED.y2 + 2 };
    expect(iou(boxes[0] as Box, moved)).toBeGreaterThanOrEqual(0.5);
  }, 60_000);

  it('refuses at install a change model of another layout: one input, or three output channels', async () => {
    const side = 64;
    const image = (name: string) => ({ name, type: 'float32' as const, dims: [1, 3, side, side] });
    const output = (channels: number) => ({
      name: 'change',
      type: 'float32' as const,
      dims: [1, channels, side, side],
      values: [],
    });
    const refused = (answer: Answer) => ({
      status: answer.status,
      code: answer.body.code,
      msg: answer.body.msg,
    });
    const prefix = 'invalid .zapk: manifest.models.siamese: the model';
    expect(
      refused(
        await install('one-input', constantModel([image('images')], [output(1)]), {
          input: inputOf(side, side),
        }),
      ),
    ).toEqual({
      status: 400,
      code: ERRORS.INVALID_PACKAGE.code,
      msg: `${prefix} takes 1 input(s) (images); a change model takes two images, A and B`,
    });
    expect(
      refused(
        await install('three-channels', constantModel([image('A'), image('B')], [output(3)]), {
          input: inputOf(side, side),
        }),
      ),
    ).toEqual({
      status: 400,
      code: ERRORS.INVALID_PACKAGE.code,
      msg: `${prefix} outputs [1,3,64,64]; a change model outputs [1,1,64,64] or [1,2,64,64]`,
    });
  }, 60_000);

  it('still refuses (42206) a diff task whose change app was given an ONNX detector', async () => {
    const side = 320;
    // YOLOX at 320: 40^2 + 20^2 + 10^2 grid cells, 5 + 1 values each.
    const detector = constantModel(
      [{ name: 'images', type: 'float32', dims: [1, 3, side, side] }],
      [{ name: 'output', type: 'float32', dims: [1, 2100, 6], values: [] }],
    );
    const installed = await install('detector-change', detector, {
      family: 'yolox',
      input: inputOf(side, side),
    });
    expect(installed.body.code, installed.body.msg).toBe(0);
    const answer = await diff('detector-change', { image_a: LEUVEN, image_b: after });
    expect({ status: answer.status, code: answer.body.code, msg: answer.body.msg }).toEqual({
      status: 422,
      code: ERRORS.MODEL_NOT_SUPPORTED.code,
      msg: 'application "change" uses the model family "yolox", which diff tasks cannot run in this build (change detection needs the built-in "change" family or a "siamese-change" model)',
    });
  }, 60_000);
});
