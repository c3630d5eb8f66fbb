import type { ChangeMapResult } from '../inference/pool';
import type { OnnxModelRef } from '../inference/protocol';
import type { Frame } from '../vision/types';
import type { Aligned } from './align';
import { CHANGE_DEFAULTS, type ChangedRegion, regionsOf } from './detect';
import { workGrid } from './working';

// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/** Runs a change model on one tile pair (the inference pool). */
export type ChangeMapRunner = (
  model: OnnxModelRef,
  pair: Uint8Array,
  width: number,
  height: number,
) => Promise<ChangeMapResult>;

export interface ChangeModelOptions {
  /** Neighbouring tiles share this share of the model's input side, so no change is cut at a tile edge alone. */
  overlap: number;
  /** Tile pairs in flight at once: the pool queues them; this bounds the memory of their pixels. */
  inFlight: number;
  /** The change map is averaged onto a grid of about this many columns (whole factor), and regions found there. */
  gridWidth: number;
  /** A pixel changed when the model gives it more than this probability. */
  threshold: number;
}

export const CHANGE_MODEL_DEFAULTS: Readonly<ChangeModelOptions> = {
  overlap: 0.25,
  inFlight: 4,
  gridWidth: 1024,
  threshold: 0.5,
};

/** A tile: its top-left corner in the image; it is the model's input size, padded past the image. */
export interface Tile {
  x: number;
  y: number;
}

/**
 * Where tiles of `size` start along an axis of `length`: every `size * (1 - overlap)` pixels, the
 * last one flush with the end; one tile at 0 when the axis is shorter than a tile.
 */
export function tileStarts(length: number, size: number, overlap: number): number[] {
  if (length <= size) return [0];
  const stride = Math.max(1, Math.round(size * (1 - overlap)));
  const starts: number[] = [];
  for (let start = 0; start + size < length; start += stride) starts.push(start);
  starts.push(length - size);
  return starts;
}

/**
 * The regions where `current` differs from the aligned reference by a change model (family
 * siamese-change): tiles of the model's input size over the image, each pair (A the reference,
 * B the current image) run in the inference pool, probabilities averaged where tiles overlap and
 * over the grid's cells, pixels the reference does not cover left out. Regions are found as the
 * built-in detector finds them (regionsOf); each scores the mean probability of its changed cells.
 */
export async function modelChanges(
  run: ChangeMapRunner,
  model: OnnxModelRef,
  current: Frame,
  aligned: Aligned,
  options: Partial<ChangeModelOptions> = {},
): Promise<ChangedRegion[]> {
  const o = { ...CHANGE_MODEL_DEFAULTS, ...options };
  const input = model.spec.input;
  if (!input) throw new Error(`model ${model.key} has no input spec`);
  const { width, height } = current;
  const grid = workGrid(width, height, o.gridWidth);
  const { cols, rows, factor } = grid;
  const sums = new Float32Array(cols * rows);
  const counts = new Uint32Array(cols * rows);
  const tiles = tileStarts(height, input.height, o.overlap).flatMap((y) =>
    tileStarts(width, input.width, o.overlap).map((x) => ({ x, y })),
  );
  for (let next = 0; next < tiles.length; next += o.inFlight) {
    await Promise.all(
      tiles.slice(next, next + o.inFlight).map(async (tile) => {
        const pair = tilePair(aligned.warped, current, tile, input.width, input.height, input.pad_value);
        const { changeMap } = await run(model, pair, input.width, input.height);
        // Onto the grid: the source remainder a whole factor leaves out goes to the last cell.
        const xEnd = Math.min(width, tile.x + input.width);
        const yEnd = Math.min(height, tile.y + input.height);
        for (let y = tile.y; y < yEnd; y++) {
          const row = Math.min(rows - 1, Math.floor(y / factor)) * cols;
          const mapRow = (y - tile.y) * input.width - tile.x;
          for (let x = tile.x; x < xEnd; x++) {
            if (aligned.valid[y * width + x] === 0) continue;
            const cell = row + Math.min(cols - 1, Math.floor(x / factor));
            sums[cell] = (sums[cell] as number) + (changeMap[mapRow + x] as number) / 255;
            counts[cell] = (counts[cell] as number) + 1;
          }
        }
      }),
    );
  }
  const foreground = new Uint8Array(cols * rows);
  const probability = new Float32Array(cols * rows);
  for (let i = 0; i < foreground.length; i++) {
    const count = counts[i] as number;
    const p = count > 0 ? (sums[i] as number) / count : 0;
    if (p > o.threshold) {
      foreground[i] = 1;
      probability[i] = p;
    }
  }
  return regionsOf(foreground, probability, grid, CHANGE_DEFAULTS, (mean) => mean);
}

/**
 * One tile of both images as the host reads it: A's packed RGB (the aligned reference), then B's
 * (the current image), each `size` pixels; past the image's edge, pad_value in both, which a model
 * sees as unchanged.
 */
function tilePair(
  warped: Uint8Array,
  current: Frame,
  tile: Tile,
  tileWidth: number,
  tileHeight: number,
  pad: number,
): Uint8Array {
  const half = tileWidth * tileHeight * 3;
  const pair = new Uint8Array(2 * half).fill(pad);
  const columns = Math.min(tileWidth, current.width - tile.x);
  const rows = Math.min(tileHeight, current.height - tile.y);
  for (let y = 0; y < rows; y++) {
    const from = ((tile.y + y) * current.width + tile.x) * 3;
    const to = y * tileWidth * 3;
    pair.set(warped.subarray(from, from + columns * 3), to);
    pair.set(current.data.subarray(from, from + columns * 3), half + to);
  }
  return pair;
}
