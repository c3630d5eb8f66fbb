import type { WorkGrid } from '../inference/blobs';
import type { Frame } from '../vision/types';

// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/** A frame area-averaged onto a working grid: RGB planes and luma, 0..255 floats. */
export interface WorkingImage extends WorkGrid {
  /** Three planes one after the other: R, G, B, each cols * rows. */
  rgb: Float32Array;
  gray: Float32Array;
}

/** The grid a frame of this size is analysed on: whole-factor downscale to about workWidth columns. */
export function workGrid(width: number, height: number, workWidth: number): WorkGrid {
  const factor = Math.max(1, Math.floor(width / workWidth));
  return {
    width,
    height,
    factor,
    cols: Math.max(1, Math.floor(width / factor)),
    rows: Math.max(1, Math.floor(height / factor)),
  };
}

/** Area average over factor x factor blocks (the remainder is left out); luma with BT.601 weights. */
export function toWorking(frame: Frame, grid: WorkGrid): WorkingImage {
  const { data, width } = frame;
  const { factor, cols, rows } = grid;
  const n = cols * rows;
  const rgb = new Float32Array(3 * n);
  const gray = new Float32Array(n);
  const sums = new Float64Array(3 * cols);
  const scale = 1 / (factor * factor);
  for (let row = 0; row < rows; row++) {
    sums.fill(0);
    for (let sy = row * factor; sy < (row + 1) * factor; sy++) {
      let p = sy * width * 3;
      for (let col = 0; col < cols; col++) {
        let r = 0;
        let g = 0;
        let b = 0;
        for (let k = 0; k < factor; k++) {
          r += data[p] as number;
          g += data[p + 1] as number;
          b += data[p + 2] as number;
          p += 3;
        }
        sums[3 * col] = (sums[3 * col] as number) + r;
        sums[3 * col + 1] = (sums[3 * col + 1] as number) + g;
        sums[3 * col + 2] = (sums[3 * col + 2] as number) + b;
      }
    }
    const base = row * cols;
    for (let col = 0; col < cols; col++) {
      const r = (sums[3 * col] as number) * scale;
      const g = (sums[3 * col + 1] as number) * scale;
      const b = (sums[3 * col + 2] as number) * scale;
      rgb[base + col] = r;
      rgb[n + base + col] = g;
      rgb[2 * n + base + col] = b;
      gray[base + col] = 0.299 * r + 0.587 * g + 0.114 * b;
    }
  }
  return { ...grid, rgb, gray };
}
