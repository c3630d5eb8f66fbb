import type { AnalysedFrame } from './task-pipeline';

/** Cells across and down the frame, whatever its size: a heatmap's memory never grows. */
export const HEAT_COLUMNS = 64;
export const HEAT_ROWS = 48;

/**
 * Where a video task's objects stood: each analysed frame adds one to the cell under the foot point
 * of every object its apps matched, so a cell counts object-frames.
 */
export class HeatGrid {
  readonly cells = new Float64Array(HEAT_COLUMNS * HEAT_ROWS);

  /** Adds a foot point given in pixels of a frame of the given size. */
  add(x: number, y: number, width: number, height: number): void {
    const column = Math.min(HEAT_COLUMNS - 1, Math.max(0, Math.floor((x / width) * HEAT_COLUMNS)));
    const row = Math.min(HEAT_ROWS - 1, Math.max(0, Math.floor((y / height) * HEAT_ROWS)));
    const cell = row * HEAT_COLUMNS + column;
    this.cells[cell] = (this.cells[cell] ?? 0) + 1;
  }

  /**
   * Adds the objects the frame's apps matched (the overlay's), each track once even when several apps
   * of one model show it.
   */
  addFrame(frame: AnalysedFrame): void {
    const seen = new Set<string>();
    for (const { modelKey, result } of frame.results) {
      for (const object of result.shown) {
        const key = `${modelKey}\n${object.track_id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        this.add(object.x, object.y + object.h / 2, frame.size.width, frame.size.height);
      }
    }
  }

  reset(): void {
    this.cells.fill(0);
  }
}
