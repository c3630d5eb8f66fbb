import { toWorking, workGrid } from '../change/working';
import type { WorkGrid } from '../inference/blobs';
import { pointInPolygon } from '../vision/geometry';
import type { Box, Frame, Point } from '../vision/types';

// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/**
 * Removed objects: an area of the scene (a zone, the region or the whole frame) whose picture differs
 * from a learned background for long enough. The background is a slow running average of small grey
 * thumbnails, so memory is a few tens of kilobytes whatever the run time; pixels under people are
 * neither compared nor learned, so someone standing in front of a shelf does not fire.
 */

/** Thumbnails are about this many columns wide. */
export const THUMBNAIL_WIDTH = 160;
/** A thumbnail pixel differs from the background by more than this many grey levels. */
export const CHANGED_LEVELS = 30;
/**
 * The background's time constant, in multiples of the rule's seconds: a change fades into it slowly
 * enough to persist through the wait (it keeps 78% of its contrast after one), and a slow light
 * change is learned before it could fire.
 */
const LEARNING_TIME_FACTOR = 4;
/** What a removed area is drawn in (OSD), whatever the app's colours: no class entry of its own. */
export const REMOVED_COLOR = '#ff00ff';

export interface WatchedArea {
  /** The zone's name; '' for the region or the whole frame. */
  name: string;
  /** Source pixels; null for the whole frame. */
  polygon: Point[] | null;
}

export interface RemovedArea {
  name: string;
  /** Bounding box of the differing pixels, source pixels. */
  box: Box;
  /** Share of the area's visible pixels that differ. */
  fraction: number;
  /** Differing pixels, source pixels. */
  area: number;
  /** How long the area has differed. */
  sinceMs: number;
}

interface AreaState {
  sinceMs?: number;
  fired: boolean;
  /** Once fired, the area as last compared, while it still differs. */
  shown?: RemovedArea;
}

interface Background {
  grid: WorkGrid;
  source: { width: number; height: number };
  mean: Float32Array;
  lastMs: number;
  /** Per watched area (by its key), its cells on the grid. */
  cells: Map<string, Uint8Array>;
  states: Map<string, AreaState>;
}

const keyOf = (area: WatchedArea) => JSON.stringify(area);

export class RemovedObjects {
  private background: Background | null = null;

  /**
   * Compares the picture with the background and learns it; returns the areas that have differed by
   * at least `fraction` for `afterMs` and fire now (once per change: an area fires again only after it
   * has matched its background once more).
   */
  update(
    nowMs: number,
    picture: Frame,
    source: { width: number; height: number },
    areas: readonly WatchedArea[],
    people: readonly Box[],
    rule: { seconds: number; fraction: number },
  ): RemovedArea[] {
    const grid = workGrid(picture.width, picture.height, THUMBNAIL_WIDTH);
    const gray = toWorking(picture, grid).gray;
    const bg = this.backgroundFor(grid, source, nowMs, gray);
    if (!bg) return [];
    const hidden = this.peopleCells(bg, people);
    // Areas edited away take their cells and waits with them, so live edits do not pile them up.
    const current = new Set(areas.map(keyOf));
    for (const key of bg.cells.keys()) {
      if (!current.has(key)) {
        bg.cells.delete(key);
        bg.states.delete(key);
      }
    }
    const fired: RemovedArea[] = [];
    for (const area of areas) {
      const key = keyOf(area);
      const cells = this.cellsOf(bg, key, area);
      const state = bg.states.get(key) ?? { fired: false };
      bg.states.set(key, state);
      const diff = this.compare(bg, gray, cells, hidden);
      // An area entirely behind people says nothing: its wait neither starts nor ends.
      if (diff === null) continue;
      if (diff.fraction < rule.fraction || (state.sinceMs !== undefined && state.sinceMs > nowMs)) {
        state.sinceMs = undefined;
        state.fired = false;
        state.shown = undefined;
        continue;
      }
      state.sinceMs ??= nowMs;
      const now = { name: area.name, ...diff, sinceMs: state.sinceMs };
      if (!state.fired && nowMs - state.sinceMs >= rule.seconds * 1000) {
        state.fired = true;
        fired.push(now);
      }
      if (state.fired) state.shown = now;
    }
    this.learn(bg, gray, hidden, nowMs, rule.seconds * 1000 * LEARNING_TIME_FACTOR);
    return fired;
  }

  /** The areas that fired and still differ from their background, as last compared: drawn until they match it. */
  showing(): RemovedArea[] {
    return [...(this.background?.states.values() ?? [])].flatMap((state) =>
      state.shown ? [state.shown] : [],
    );
  }

  /** The background for this picture size, started from the picture itself on the first frame (null then). */
  private backgroundFor(
    grid: WorkGrid,
    source: { width: number; height: number },
    nowMs: number,
    gray: Float32Array,
  ): Background | null {
    const bg = this.background;
    const same =
      bg &&
      bg.grid.cols === grid.cols &&
      bg.grid.rows === grid.rows &&
      bg.grid.factor === grid.factor &&
      bg.source.width === source.width &&
      bg.source.height === source.height;
    if (same) return bg;
    this.background = {
      grid,
      source,
      mean: gray.slice(),
      lastMs: nowMs,
      cells: new Map(),
      states: new Map(),
    };
    return null;
  }

  /** Source pixels per grid cell along x and y. */
  private static cellSize(bg: Background): [number, number] {
    const { grid, source } = bg;
    return [(grid.factor * source.width) / grid.width, (grid.factor * source.height) / grid.height];
  }

  private cellsOf(bg: Background, key: string, area: WatchedArea): Uint8Array {
    const known = bg.cells.get(key);
    if (known) return known;
    const { cols, rows } = bg.grid;
    const [cw, ch] = RemovedObjects.cellSize(bg);
    const cells = new Uint8Array(cols * rows);
    for (let row = 0; row < rows; row++) {
      for (let col = 0; col < cols; col++) {
        const centre: Point = [(col + 0.5) * cw, (row + 0.5) * ch];
        cells[row * cols + col] = area.polygon === null || pointInPolygon(centre, area.polygon) ? 1 : 0;
      }
    }
    bg.cells.set(key, cells);
    return cells;
  }

  /** Cells under a person's box, widened by a cell for the blur of the thumbnail. */
  private peopleCells(bg: Background, people: readonly Box[]): Uint8Array {
    const { cols, rows } = bg.grid;
    const [cw, ch] = RemovedObjects.cellSize(bg);
    const hidden = new Uint8Array(cols * rows);
    for (const box of people) {
      const c1 = Math.max(0, Math.floor(box.x1 / cw) - 1);
      const c2 = Math.min(cols - 1, Math.ceil(box.x2 / cw));
      const r1 = Math.max(0, Math.floor(box.y1 / ch) - 1);
      const r2 = Math.min(rows - 1, Math.ceil(box.y2 / ch));
      for (let row = r1; row <= r2; row++) hidden.fill(1, row * cols + c1, row * cols + c2 + 1);
    }
    return hidden;
  }

  /** The area's differing share and their box; null when people hide all of it. */
  private compare(
    bg: Background,
    gray: Float32Array,
    cells: Uint8Array,
    hidden: Uint8Array,
  ): Omit<RemovedArea, 'name' | 'sinceMs'> | null {
    const { cols } = bg.grid;
    let visible = 0;
    let changed = 0;
    let [c1, r1, c2, r2] = [Infinity, Infinity, -1, -1];
    for (let i = 0; i < cells.length; i++) {
      if (!cells[i] || hidden[i]) continue;
      visible++;
      if (Math.abs((gray[i] as number) - (bg.mean[i] as number)) <= CHANGED_LEVELS) continue;
      changed++;
      const [col, row] = [i % cols, Math.floor(i / cols)];
      [c1, r1, c2, r2] = [Math.min(c1, col), Math.min(r1, row), Math.max(c2, col), Math.max(r2, row)];
    }
    if (visible === 0) return null;
    const [cw, ch] = RemovedObjects.cellSize(bg);
    const box =
      changed > 0
        ? { x1: c1 * cw, y1: r1 * ch, x2: (c2 + 1) * cw, y2: (r2 + 1) * ch }
        : { x1: 0, y1: 0, x2: 0, y2: 0 };
    return { box, fraction: changed / visible, area: Math.round(changed * cw * ch) };
  }

  /** Moves the background towards the picture where no one stands, at a rate set by time, not frame rate. */
  private learn(
    bg: Background,
    gray: Float32Array,
    hidden: Uint8Array,
    nowMs: number,
    timeConstantMs: number,
  ): void {
    const dt = Math.max(0, nowMs - bg.lastMs);
    bg.lastMs = nowMs;
    const rate = 1 - Math.exp(-dt / timeConstantMs);
    for (let i = 0; i < gray.length; i++) {
      if (!hidden[i])
        bg.mean[i] = (bg.mean[i] as number) + rate * ((gray[i] as number) - (bg.mean[i] as number));
    }
  }
}
