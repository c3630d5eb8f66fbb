// Over 400 lines on purpose: each model family's decoding and NMS on hand-made tensors, compared whole.
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeOutput } from '../engine/inference/decode';
import { letterbox, undoLetterbox } from '../engine/inference/letterbox';
import { iou, nms, postprocess } from '../engine/inference/nms';
import type { ModelInput } from '../engine/packages/manifest';
import type { Detection, Frame } from '../engine/vision/types';
import { FIXTURES } from './helpers/fixtures';

/** A [1, rows, columns] tensor with every value 0 except the given rows. */
function rowTensor(rows: number, columns: number, filled: Record<number, number[]>) {
  const data = new Float32Array(rows * columns);
  for (const [row, values] of Object.entries(filled)) data.set(values, Number(row) * columns);
  return { data, dims: [1, rows, columns] };
}

/** The same tensor with its last two axes swapped. */
function transpose(data: Float32Array, rows: number, columns: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < columns; c++) out[c * rows + r] = data[r * columns + c] as number;
  return out;
}

function solidFrame(width: number, height: number, rgb: [number, number, number]): Frame {
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < data.length; i += 3) data.set(rgb, i);
  return { data, width, height };
}

const RAW_BGR: ModelInput = {
  width: 8,
  height: 8,
  channel_order: 'BGR',
  scale: 1,
  mean: [0, 0, 0],
  std: [1, 1, 1],
  letterbox: 'top-left',
  pad_value: 114,
};

/** Value of channel plane p at (x, y) of an NCHW tensor of the given size. */
const at = (tensor: Float32Array, input: ModelInput, p: number, x: number, y: number) =>
  tensor[p * input.width * input.height + y * input.width + x];

describe('yolox decode', () => {
  // A 64x64 input has 8x8 + 4x4 + 2x2 = 84 anchor points; 3 classes give 8 columns.
  const input = { width: 64, height: 64 };

  it('grid-decodes a box at a known cell of the stride-16 level', () => {
    // Stride 16 starts after the 64 stride-8 rows; cell (gx 2, gy 1) is row 64 + 1*4 + 2.
    const { data, dims } = rowTensor(84, 8, { 70: [0.5, 0.25, Math.log(2), 0, 0.9, 0.1, 0.8, 0.3] });
    const [box, ...rest] = decodeOutput('yolox', data, dims, input, 0.3);
    expect(rest).toEqual([]);
    // cx = (0.5+2)*16 = 40, cy = (0.25+1)*16 = 20, w = 2*16 = 32, h = 16.
    expect(box?.x1).toBeCloseTo(24, 5);
    expect(box?.y1).toBeCloseTo(12, 5);
    expect(box?.x2).toBeCloseTo(56, 5);
    expect(box?.y2).toBeCloseTo(28, 5);
    expect(box?.classIndex).toBe(1);
    expect(box?.score).toBeCloseTo(0.72, 5);
  });

  it('places the last row at the last cell of the stride-32 level', () => {
    const { data, dims } = rowTensor(84, 8, { 83: [0, 0, 0, 0, 1, 0, 0, 0.6] });
    const [box] = decodeOutput('yolox', data, dims, input, 0.3);
    // Cell (1, 1) at stride 32: centre (32, 32), size 32.
    expect(box).toMatchObject({ x1: 16, y1: 16, x2: 48, y2: 48, classIndex: 2 });
    expect(box?.score).toBeCloseTo(0.6, 6);
  });

  it('keeps a score equal to the threshold and drops lower objectness or class scores', () => {
    const { data, dims } = rowTensor(84, 8, {
      0: [0, 0, 0, 0, 1, 0.5, 0, 0],
      1: [0, 0, 0, 0, 0.9, 0.3, 0.2, 0.1],
      2: [0, 0, 0, 0, 0.2, 1, 1, 1],
    });
    expect(decodeOutput('yolox', data, dims, input, 0.5).map((c) => c.x1)).toEqual([-4]);
    expect(decodeOutput('yolox', data, dims, input, 0.51)).toEqual([]);
    expect(decodeOutput('yolox', data, dims, input, 0.2)).toHaveLength(3);
  });

  it('refuses a row count that does not match the grids of the input', () => {
    const { data, dims } = rowTensor(85, 8, {});
    expect(() => decodeOutput('yolox', data, dims, input, 0.3)).toThrow(
      'yolox output has 85 rows but a 64x64 input has 84 anchor points (8x8 + 4x4 + 2x2 at strides 8, 16, 32)',
    );
  });

  it('refuses wrong ranks, batches, too few columns and data of the wrong length', () => {
    const data = new Float32Array(84 * 8);
    expect(() => decodeOutput('yolox', data, [84, 8], input, 0.3)).toThrow(
      'yolox output must be [1, N, 5+C]; got [84,8]',
    );
    expect(() => decodeOutput('yolox', data, [2, 42, 8], input, 0.3)).toThrow('got [2,42,8]');
    expect(() => decodeOutput('yolox', new Float32Array(84 * 5), [1, 84, 5], input, 0.3)).toThrow(
      'got [1,84,5]',
    );
    expect(() => decodeOutput('yolox', data, [1, 84, 9], input, 0.3)).toThrow(
      'yolox output holds 672 values but its shape [1,84,9] needs 756',
    );
  });
});

describe('yolov5 decode', () => {
  it('takes boxes as they are and scores obj * best class', () => {
    const { data, dims } = rowTensor(3, 7, {
      1: [100, 50, 40, 20, 0.8, 0.25, 0.9],
      2: [10, 10, 4, 4, 0.4, 0.5, 0.5],
    });
    const candidates = decodeOutput('yolov5', data, dims, { width: 640, height: 640 }, 0.3);
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({ x1: 80, y1: 40, x2: 120, y2: 60, classIndex: 1 });
    expect(candidates[0]?.score).toBeCloseTo(0.72, 6);
  });

  it('refuses an output without class columns', () => {
    expect(() =>
      decodeOutput('yolov5', new Float32Array(15), [1, 3, 5], { width: 64, height: 64 }, 0.3),
    ).toThrow('yolov5 output must be [1, N, 5+C]; got [1,3,5]');
  });
});

describe('yolov8 decode', () => {
  // 10 anchors, 3 classes: channels-first [1, 7, 10].
  const anchors = 10;
  const channels = 7;
  const channelsFirst = transpose(
    rowTensor(anchors, channels, {
      3: [30, 40, 20, 10, 0.31, 0.1, 0.2],
      6: [200, 100, 50, 30, 0.2, 0.1, 0.95],
      8: [5, 5, 2, 2, 0.29, 0.1, 0.2],
    }).data,
    anchors,
    channels,
  );
  const input = { width: 640, height: 640 };

  it('decodes the channels-first layout with the best class and no objectness', () => {
    const candidates = decodeOutput('yolov8', channelsFirst, [1, channels, anchors], input, 0.3);
    expect(candidates.map((c) => [c.x1, c.y1, c.x2, c.y2, c.classIndex])).toEqual([
      [20, 35, 40, 45, 0],
      [175, 85, 225, 115, 2],
    ]);
    expect(candidates.map((c) => c.score)).toEqual([Math.fround(0.31), Math.fround(0.95)]);
  });

  it('reads the transposed [1, N, 4+C] layout to the same candidates', () => {
    const anchorsFirst = transpose(channelsFirst, channels, anchors);
    expect(decodeOutput('yolov8', anchorsFirst, [1, anchors, channels], input, 0.3)).toEqual(
      decodeOutput('yolov8', channelsFirst, [1, channels, anchors], input, 0.3),
    );
  });

  it('gives the same answer for a small output after a larger one', () => {
    // The per-anchor scratch is reused across calls; a larger output must not leave stale maxima behind.
    const wide = new Float32Array(7 * 40);
    wide.set([0.6, 0.7, 0.8], 4 * 40 + 37);
    wide[6 * 40 + 36] = 0.9;
    const candidates = decodeOutput('yolov8', wide, [1, 7, 40], input, 0.5);
    expect(candidates.map((c) => [c.classIndex, c.score])).toEqual(
      [
        [2, 0.9],
        [0, 0.6],
        [0, 0.7],
        [0, 0.8],
      ].map(([c, score]) => [c, Math.fround(score as number)]),
    );
    expect(decodeOutput('yolov8', channelsFirst, [1, channels, anchors], input, 0.3)).toHaveLength(2);
  });

  it('refuses a square or classless output', () => {
    expect(() => decodeOutput('yolov8', new Float32Array(49), [1, 7, 7], input, 0.3)).toThrow(
      'yolov8 output must be [1, 4+C, N] or [1, N, 4+C] with N > 4+C; got [1,7,7]',
    );
    expect(() => decodeOutput('yolov8', new Float32Array(400), [1, 4, 100], input, 0.3)).toThrow(
      'got [1,4,100]',
    );
  });
});

describe('nms', () => {
  const box = (x1: number, x2: number, score: number, classIndex: number) => ({
    x1,
    y1: 0,
    x2,
    y2: 10,
    score,
    classIndex,
  });

  it('suppresses overlaps within a class only, unless class-agnostic', () => {
    const person = box(0, 10, 0.9, 0);
    const samePerson = box(1, 11, 0.8, 0);
    const car = box(1, 11, 0.95, 2);
    const truck = box(0, 10, 0.7, 7);
    const farPerson = box(50, 60, 0.6, 0);
    const all = [truck, person, samePerson, car, farPerson];
    expect(nms(all, 0.45)).toEqual([car, person, truck, farPerson]);
    expect(nms(all, 0.45, true)).toEqual([car, farPerson]);
    expect(all).toEqual([truck, person, samePerson, car, farPerson]);
  });

  it('keeps a box whose IoU equals the threshold and drops it just above', () => {
    const left = box(0, 10, 0.9, 0);
    const half = { ...box(0, 10, 0.8, 0), y2: 5 };
    expect(iou(left, half)).toBe(0.5);
    expect(nms([left, half], 0.5)).toEqual([left, half]);
    expect(nms([left, half], 0.49)).toEqual([left]);
  });

  it('gives 0 IoU for touching or empty boxes', () => {
    expect(iou(box(0, 10, 1, 0), box(10, 20, 1, 0))).toBe(0);
    expect(iou(box(5, 5, 1, 0), box(5, 5, 1, 0))).toBe(0);
  });
});

describe('letterbox', () => {
  it('writes BGR planes, fills the rest with pad_value and puts the image top-left', () => {
    // 4x2 into 8x8: r = 2, image 8x4 on rows 0-3, padding on rows 4-7.
    const { tensor, scaleX, scaleY, padX, padY } = letterbox(solidFrame(4, 2, [10, 20, 30]), RAW_BGR);
    expect([scaleX, scaleY, padX, padY]).toEqual([2, 2, 0, 0]);
    expect(tensor).toHaveLength(3 * 64);
    expect([0, 1, 2].map((p) => at(tensor, RAW_BGR, p, 7, 3))).toEqual([30, 20, 10]);
    expect([0, 1, 2].map((p) => at(tensor, RAW_BGR, p, 0, 4))).toEqual([114, 114, 114]);
    expect([0, 1, 2].map((p) => at(tensor, RAW_BGR, p, 7, 7))).toEqual([114, 114, 114]);
  });

  it('centres the image when asked, the odd pixel of padding going below', () => {
    // 3x1 into 8x8: r = 8/3, image 8x3, 5 rows of padding: 2 above, 3 below.
    const input: ModelInput = { ...RAW_BGR, channel_order: 'RGB', letterbox: 'center' };
    const { tensor, padX, padY } = letterbox(solidFrame(3, 1, [10, 20, 30]), input);
    expect([padX, padY]).toEqual([0, 2]);
    const column = [0, 1, 2, 3, 4, 5, 6, 7].map((y) => at(tensor, input, 0, 4, y));
    expect(column).toEqual([114, 114, 10, 10, 10, 114, 114, 114]);
    expect(at(tensor, input, 2, 4, 3)).toBe(30);
  });

  it('centres horizontally for a portrait frame', () => {
    const input: ModelInput = { ...RAW_BGR, letterbox: 'center' };
    const { tensor, scaleX, scaleY, padX, padY } = letterbox(solidFrame(2, 4, [0, 0, 0]), input);
    expect([scaleX, scaleY, padX, padY]).toEqual([2, 2, 2, 0]);
    const row = [0, 1, 2, 3, 4, 5, 6, 7].map((x) => at(tensor, input, 1, x, 5));
    expect(row).toEqual([114, 114, 0, 0, 0, 0, 114, 114]);
  });

  it('interpolates bilinearly between pixel centres, clamping at the edges', () => {
    // A 2x1 ramp (0, 100) upscaled x2: samples at -0.25, 0.25, 0.75, 1.25 source pixels.
    const frame: Frame = { data: new Uint8Array([0, 0, 0, 100, 100, 100]), width: 2, height: 1 };
    const input: ModelInput = { ...RAW_BGR, width: 4, height: 4 };
    const { tensor } = letterbox(frame, input);
    expect([0, 1, 2, 3].map((x) => at(tensor, input, 0, x, 0))).toEqual([0, 25, 75, 100]);
    expect([0, 1, 2, 3].map((x) => at(tensor, input, 0, x, 1))).toEqual([0, 25, 75, 100]);
  });

  it('applies scale, mean and std per output channel, padding included', () => {
    const input: ModelInput = {
      ...RAW_BGR,
      channel_order: 'RGB',
      scale: 1 / 255,
      mean: [0.485, 0.456, 0.406],
      std: [0.229, 0.224, 0.225],
    };
    const { tensor } = letterbox(solidFrame(4, 2, [51, 102, 204]), input);
    expect(at(tensor, input, 0, 0, 0)).toBeCloseTo((0.2 - 0.485) / 0.229, 5);
    expect(at(tensor, input, 1, 0, 0)).toBeCloseTo((0.4 - 0.456) / 0.224, 5);
    expect(at(tensor, input, 2, 0, 0)).toBeCloseTo((0.8 - 0.406) / 0.225, 5);
    expect(at(tensor, input, 2, 0, 7)).toBeCloseTo((114 / 255 - 0.406) / 0.225, 5);
  });

  it('reuses the given tensor and refuses one of the wrong size', () => {
    const out = new Float32Array(3 * 64);
    expect(letterbox(solidFrame(4, 2, [1, 2, 3]), RAW_BGR, out).tensor).toBe(out);
    expect(() => letterbox(solidFrame(4, 2, [1, 2, 3]), RAW_BGR, new Float32Array(10))).toThrow(
      'output tensor holds 10 floats; [1,3,8,8] needs 192',
    );
  });

  it('refuses frame data that does not match its size', () => {
    expect(() => letterbox({ data: new Uint8Array(5), width: 2, height: 1 }, RAW_BGR)).toThrow(
      'frame data holds 5 bytes; 2x1 RGB needs 6',
    );
  });

  it('maps a box back to the frame exactly and clips what falls in the padding', () => {
    // 640x480 centred in 416x416: r = 0.65, image 416x312, 52 rows of padding above.
    const input: ModelInput = { ...RAW_BGR, width: 416, height: 416, letterbox: 'center' };
    const info = letterbox(solidFrame(640, 480, [0, 0, 0]), input);
    expect([info.scaleX, info.scaleY, info.padX, info.padY]).toEqual([0.65, 0.65, 0, 52]);
    const source = { x1: 100, y1: 50, x2: 300, y2: 200 };
    const inModel = { x1: 65, y1: 50 * 0.65 + 52, x2: 195, y2: 200 * 0.65 + 52 };
    const back = undoLetterbox(inModel, info, 640, 480);
    for (const key of ['x1', 'y1', 'x2', 'y2'] as const) expect(back[key]).toBeCloseTo(source[key], 9);
    expect(undoLetterbox({ x1: -10, y1: 10, x2: 500, y2: 400 }, info, 640, 480)).toEqual({
      x1: 0,
      y1: 0,
      x2: 640,
      y2: 480,
    });
  });
});

describe('postprocess', () => {
  it('decodes, suppresses, maps back to the frame and drops boxes left in the padding', () => {
    // 64x64 yolox input, a 128x64 frame placed top-left at r = 0.5: rows 32-63 are padding.
    const { data, dims } = rowTensor(84, 8, {
      // Stride 8, cell (1, 1): centre (12, 12), size 8 -> frame box (16, 16)-(32, 32).
      9: [0.5, 0.5, 0, 0, 0.9, 0.9, 0, 0],
      // Its neighbour one pixel right, lower score: suppressed.
      10: [-0.375, 0.5, 0, 0, 0.8, 0.9, 0, 0],
      // Stride 8, cell (3, 6): centre (28, 52), wholly inside the padding.
      51: [0.5, 0.5, 0, 0, 0.9, 0, 0, 0.9],
    });
    const detections = postprocess(
      [{ name: 'output', data, dims }],
      {
        family: 'yolox',
        input: { width: 64, height: 64 },
        score_threshold: 0.3,
        nms_iou: 0.45,
        class_agnostic_nms: false,
      },
      3,
      { scaleX: 0.5, scaleY: 0.5, padX: 0, padY: 0 },
      128,
      64,
    );
    expect(detections).toHaveLength(1);
    expect(detections[0]).toMatchObject({ x1: 16, y1: 16, x2: 32, y2: 32, classIndex: 0 });
    expect(detections[0]?.score).toBeCloseTo(0.81, 6);
  });
});

describe('yolox_nano.onnx on a real image', () => {
  const YOLOX_INPUT: ModelInput = {
    width: 416,
    height: 416,
    channel_order: 'BGR',
    scale: 1,
    mean: [0, 0, 0],
    std: [1, 1, 1],
    letterbox: 'top-left',
    pad_value: 114,
  };

  async function readFrame(file: string): Promise<Frame> {
    const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  }

  it('finds the two basketball players', async () => {
    const frame = await readFrame(join(FIXTURES, 'media', 'basketball1.png'));
    expect([frame.width, frame.height]).toEqual([640, 480]);
    const session = await ort.InferenceSession.create(join(FIXTURES, 'models', 'yolox_nano.onnx'));
    try {
      const { tensor, ...placement } = letterbox(frame, YOLOX_INPUT);
      const results = await session.run({ images: new ort.Tensor('float32', tensor, [1, 3, 416, 416]) });
      const output = results.output as ort.Tensor;
      expect(output.dims).toEqual([1, 3549, 85]);
      const detections = postprocess(
        [{ name: 'output', data: output.data as Float32Array, dims: output.dims }],
        {
          family: 'yolox',
          input: YOLOX_INPUT,
          score_threshold: 0.3,
          nms_iou: 0.45,
          class_agnostic_nms: false,
        },
        80,
        placement,
        frame.width,
        frame.height,
      );
      expect(detections.map((d) => d.classIndex)).toEqual([0, 0]);
      for (const d of detections) {
        expect(d.score).toBeGreaterThan(0.8);
        expect(d.x1).toBeGreaterThanOrEqual(0);
        expect(d.y1).toBeGreaterThanOrEqual(0);
        expect(d.x2).toBeLessThanOrEqual(640);
        expect(d.y2).toBeLessThanOrEqual(480);
        // A player is a sizeable box, not a sliver.
        expect(d.x2 - d.x1).toBeGreaterThan(50);
        expect(d.y2 - d.y1).toBeGreaterThan(100);
      }
      expect(iou(detections[0] as Detection, detections[1] as Detection)).toBeLessThan(0.2);
    } finally {
      await session.release();
    }
  });
});

describe('letterbox speed', () => {
  it('reports the mean time for a 768x576 frame into 416x416', () => {
    const frame: Frame = { data: new Uint8Array(768 * 576 * 3), width: 768, height: 576 };
    for (let i = 0; i < frame.data.length; i++) frame.data[i] = (i * 7919) & 255;
    const input: ModelInput = { ...RAW_BGR, width: 416, height: 416 };
    const out = new Float32Array(3 * 416 * 416);
    for (let i = 0; i < 10; i++) letterbox(frame, input, out);
    const runs = 100;
    const start = performance.now();
    for (let i = 0; i < runs; i++) letterbox(frame, input, out);
    const meanMs = (performance.now() - start) / runs;
    console.log(`letterbox 768x576 -> 416x416: ${meanMs.toFixed(3)} ms mean over ${runs} runs`);
    expect(at(out, input, 0, 0, 415)).toBe(114);
  });
});
