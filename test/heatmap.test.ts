import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { heatmapPng, heatPixels } from '../engine/osd/heatmap';
import { HEAT_COLUMNS, HEAT_ROWS, HeatGrid } from '../engine/pipeline/heat-grid';
import type { AnalysedFrame } from '../engine/pipeline/task-pipeline';
import type { ShownObject } from '../engine/rules/rule-kind';

/** The grid's warm cells as [column, row, count]. */
const warm = (grid: HeatGrid) =>
  [...grid.cells].flatMap((count, i) =>
    count > 0 ? [[i % HEAT_COLUMNS, Math.floor(i / HEAT_COLUMNS), count]] : [],
  );

/** A shown object whose foot point is (x, y). */
const shown = (trackId: string, x: number, y: number): ShownObject => ({
  track_id: trackId,
  x,
  y: y - 20,
  w: 20,
  h: 40,
  score: 0.9,
  class_id: '0',
  name: 'person',
  color: '#ff0000',
});

describe('HeatGrid', () => {
  it('is 64 x 48 cells over any frame, whatever the run time', () => {
    expect([HEAT_COLUMNS, HEAT_ROWS, new HeatGrid().cells.length]).toEqual([64, 48, 64 * 48]);
  });

  it('counts foot points per cell, a point on the far edges in the last cell', () => {
    const grid = new HeatGrid();
    grid.add(0, 0, 768, 576);
    grid.add(11.9, 11.9, 768, 576);
    grid.add(384, 288, 768, 576);
    grid.add(768, 576, 768, 576);
    expect(warm(grid)).toEqual([
      [0, 0, 2],
      [32, 24, 1],
      [63, 47, 1],
    ]);
    grid.reset();
    expect(warm(grid)).toEqual([]);
  });

  it("adds each frame's matched objects once per track and model, at their foot points", () => {
    const grid = new HeatGrid();
    const result = (objects: ShownObject[]) => ({ firings: [], shown: objects, zoneOccupied: true });
    const frame = {
      size: { width: 640, height: 480 },
      results: [
        { appId: 'a', modelKey: 'm1', result: result([shown('1', 5, 475)]) },
        { appId: 'b', modelKey: 'm1', result: result([shown('1', 5, 475), shown('2', 635, 5)]) },
        { appId: 'c', modelKey: 'm2', result: result([shown('1', 5, 475)]) },
      ],
    } as unknown as AnalysedFrame;
    grid.addFrame(frame);
    expect(warm(grid)).toEqual([
      [63, 0, 1],
      [0, 47, 2],
    ]);
  });
});

describe('heat drawing', () => {
  it('leaves cold cells clear and ramps warm ones by log count from blue to red', () => {
    const grid = new HeatGrid();
    grid.add(0, 0, 64, 48);
    grid.add(1, 0, 64, 48);
    grid.add(1, 0, 64, 48);
    grid.add(1, 0, 64, 48);
    const pixels = heatPixels(grid);
    // log(1 + 1) / log(1 + 3) = 0.5: half way, between cyan and yellow; 3 is the hottest: red.
    expect([...pixels.subarray(0, 12)]).toEqual([128, 255, 128, 102, 255, 0, 0, 153, 0, 0, 0, 0]);
    expect(pixels.subarray(8).every((v) => v === 0)).toBe(true);
  });

  it('draws the heat over the frame scaled to the width, as PNG', async () => {
    const grey = { data: Buffer.alloc(768 * 576 * 3, 128), width: 768, height: 576 };
    const grid = new HeatGrid();
    // A hot block of 8 x 8 cells at the top left: 96 x 72 source pixels.
    for (let x = 0; x < 96; x += 12) for (let y = 0; y < 72; y += 12) grid.add(x, y, 768, 576);
    const png = await heatmapPng(grey, grid, 384);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect([(await sharp(png).metadata()).format, info.width, info.height]).toEqual(['png', 384, 288]);
    const at = (x: number, y: number) => [...data.subarray((y * 384 + x) * 3, (y * 384 + x) * 3 + 3)];
    // Red at 60% over grey inside the block; the grey untouched far from it.
    expect([at(24, 18), at(300, 200)]).toEqual([
      [204, 51, 51],
      [128, 128, 128],
    ]);
  });
});
