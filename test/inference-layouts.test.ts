import { describe, expect, it } from 'vitest';
import { decodeOutputs, outputClassCount } from '../engine/inference/decode';
import { letterboxInterleaved } from '../engine/inference/letterbox';
import type { ModelInput } from '../engine/packages/manifest';

/** The layouts the end-to-end family test (model-families.test.ts) does not reach, read directly. */

const INPUT = { width: 64, height: 64 };
const box = { x1: 10, y1: 20, x2: 30, y2: 60 };

describe('generic YOLO layouts, told apart by the number of labels', () => {
  // One anchor of 2 classes at cx 20, cy 40, w 20, h 40, class 1; the second anchor scores nothing.
  it('reads [1, N, 5+C] and [1, 5+C, N] with objectness as the same boxes', () => {
    const anchorsFirst = {
      name: 'out',
      dims: [1, 2, 7],
      data: [20, 40, 20, 40, 0.75, 0.25, 1, 0, 0, 0, 0, 0, 0, 0],
    };
    const channelsFirst = {
      name: 'out',
      dims: [1, 7, 2],
      data: [20, 0, 40, 0, 20, 0, 40, 0, 0.75, 0, 0.25, 0, 1, 0],
    };
    const expected = [{ ...box, score: 0.75, classIndex: 1 }];
    expect(decodeOutputs('yolo-generic', [anchorsFirst], INPUT, 2, 0.3)).toEqual(expected);
    expect(decodeOutputs('yolo-generic', [channelsFirst], INPUT, 2, 0.3)).toEqual(expected);
    expect(outputClassCount('yolo-generic', [channelsFirst], 2)).toBe(2);
  });

  it('refuses a shape that fits neither layout for the labels, saying what it expected', () => {
    const output = { name: 'out', dims: [1, 2, 9], data: new Array(18).fill(0) };
    expect(() => decodeOutputs('yolo-generic', [output], INPUT, 2, 0.3)).toThrow(
      'yolo-generic output for 2 labels must be [1, 6|7, N] or [1, N, 6|7]; got [1,2,9]',
    );
  });
});

describe('an NHWC input', () => {
  const input: ModelInput = {
    width: 4,
    height: 4,
    channel_order: 'BGR',
    scale: 1,
    mean: [0, 0, 0],
    std: [1, 1, 1],
    letterbox: 'top-left',
    pad_value: 114,
    layout: 'NHWC',
    dtype: 'uint8',
  };

  it('interleaves the channels in the model’s order and pads with pad_value', () => {
    // 4x2 RGB (10, 20, 30) into 4x4: rows 0-1 the image, rows 2-3 padding.
    const frame = {
      data: new Uint8Array(4 * 2 * 3).map((_, i) => [10, 20, 30][i % 3] as number),
      width: 4,
      height: 2,
    };
    const out = new Uint8Array(4 * 4 * 3);
    expect(letterboxInterleaved(frame, input, out)).toEqual({ scaleX: 1, scaleY: 1, padX: 0, padY: 0 });
    expect([...out.subarray(0, 3)]).toEqual([30, 20, 10]);
    expect([...out.subarray(3 * 8, 3 * 8 + 3)]).toEqual([114, 114, 114]);
  });
});
