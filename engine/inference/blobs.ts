import type { Detection } from '../vision/types';

// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/** A working grid: the source area-averaged by a whole factor; the right and bottom remainder left out. */
export interface WorkGrid {
  width: number;
  height: number;
  factor: number;
  cols: number;
  rows: number;
}

/** A connected region of a mask as a detection of class 0, with its area in source pixels. */
export type Blob = Detection & { area: number };

/** Maps a mean difference over threshold (> 1) to 0..1: 1.2 scores 0.31, twice over 0.75, three times over 0.89. */
export const overThreshold = (meanRatio: number) => 1 - 1 / (meanRatio * meanRatio);

/**
 * 8-connected components of `mask` (working grid) of at least minArea working pixels, as boxes in
 * source pixels. The score is `score` of the mean of `ratio` (> 0 on foreground: by default the
 * difference over threshold, see overThreshold) over the component's foreground. `visited` and
 * `queue` are work buffers of the grid's size.
 */
export function blobsOf(
  mask: Uint8Array,
  ratio: Float32Array,
  grid: WorkGrid,
  minArea: number,
  visited: Uint8Array,
  queue: Int32Array,
  score: (meanRatio: number) => number = overThreshold,
): Blob[] {
  const { cols, rows, factor, width, height } = grid;
  visited.fill(0);
  const blobs: Blob[] = [];
  for (let start = 0; start < mask.length; start++) {
    if (mask[start] === 0 || visited[start] === 1) continue;
    visited[start] = 1;
    queue[0] = start;
    let head = 0;
    let tail = 1;
    let minX = cols;
    let minY = rows;
    let maxX = -1;
    let maxY = -1;
    let ratioSum = 0;
    let foregroundPixels = 0;
    while (head < tail) {
      const i = queue[head++] as number;
      const x = i % cols;
      const y = (i - x) / cols;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
      const r = ratio[i] as number;
      if (r > 0) {
        ratioSum += r;
        foregroundPixels++;
      }
      const x0 = x > 0 ? x - 1 : x;
      const x1 = x < cols - 1 ? x + 1 : x;
      const y0 = y > 0 ? y - 1 : y;
      const y1 = y < rows - 1 ? y + 1 : y;
      for (let ny = y0; ny <= y1; ny++) {
        for (let nx = x0; nx <= x1; nx++) {
          const j = ny * cols + nx;
          if (mask[j] === 1 && visited[j] === 0) {
            visited[j] = 1;
            queue[tail++] = j;
          }
        }
      }
    }
    if (tail < minArea || foregroundPixels === 0) continue;
    const meanRatio = ratioSum / foregroundPixels;
    blobs.push({
      // The last working column or row also covers the source remainder the whole factor left out.
      x1: minX * factor,
      y1: minY * factor,
      x2: maxX === cols - 1 ? width : (maxX + 1) * factor,
      y2: maxY === rows - 1 ? height : (maxY + 1) * factor,
      score: score(meanRatio),
      classIndex: 0,
      area: tail * factor * factor,
    });
  }
  return blobs;
}
