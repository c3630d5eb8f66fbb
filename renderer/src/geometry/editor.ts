/**
 * The polygon editor's model: one shape per application of a task, in source-frame pixels, with
 * undo/redo. Pure functions from state to state; the canvas only turns mouse and keys into them.
 * A region is finished once closed (3+ points); a counting line (time-series apps) once it has 2;
 * the marks of a calibration once there are 4. An app's zones, masks and calibration are further
 * shapes of the same state, tagged with their app (./areas).
 */

import type { AppConfig, LineDirection, Polygon } from '../../../engine/contract';
import { polygonProblem } from '../../../engine/contract';

export type SourcePoint = [number, number];
export type ShapeKind = 'region' | 'line' | 'marks';

/** What a shape other than an app's own polygon is: one of the app's zones, masks, calibration. */
export interface AreaTag {
  app: string;
  role: 'zone' | 'mask' | 'calibration' | 'measure';
  /** A zone's name. */
  name?: string;
  /** The calibration's ground position of each mark, in metres, as typed: [x, y] texts. */
  ground?: ReadonlyArray<readonly [string, string]>;
}

export interface Shape {
  kind: ShapeKind;
  points: SourcePoint[];
  /** A region that was closed, a line with both ends, all 4 marks: what the engine can take. */
  closed: boolean;
  /** Absent for an app's own polygon (keyed by its app_id). */
  area?: AreaTag;
  /** A counting line's direction: the crossings that count (default both). */
  direction?: LineDirection;
}

/** How many points finish a shape of a kind that needs a fixed number. */
const FIXED_POINTS: Partial<Record<ShapeKind, number>> = { line: 2, marks: 4 };
/** Fewest points of a finished shape. */
const leastPoints = (kind: ShapeKind) => FIXED_POINTS[kind] ?? 3;

export interface EditorApp {
  app_id: string;
  /** 1 detection, 2 change detection, 3 time-series (the only type that may use a line). */
  type: number;
}

interface Snapshot {
  shapes: Readonly<Record<string, Shape>>;
}

export interface EditorState extends Snapshot {
  active: string;
  past: readonly Snapshot[];
  future: readonly Snapshot[];
}

const HISTORY_LIMIT = 200;

function shapeOf(config: AppConfig | undefined): Shape {
  const points = (config?.polygon ?? []).map(([x, y]) => [x, y] as SourcePoint);
  if (points.length === 2)
    return { kind: 'line', points, closed: true, direction: config?.line_direction ?? 'both' };
  return { kind: 'region', points, closed: points.length >= 3 };
}

/** The editor for a task's apps, with the polygons the engine has now. */
export function createEditor(apps: readonly EditorApp[], configs: readonly AppConfig[]): EditorState {
  const shapes: Record<string, Shape> = {};
  for (const app of apps) {
    shapes[app.app_id] = shapeOf(configs.find((config) => config.app_id === app.app_id));
  }
  return { shapes, active: apps[0]?.app_id ?? '', past: [], future: [] };
}

/** Replaces the shapes, recording the previous state for undo. */
export function commitShapes(state: EditorState, shapes: Readonly<Record<string, Shape>>): EditorState {
  const past = [...state.past, { shapes: state.shapes }].slice(-HISTORY_LIMIT);
  return { ...state, shapes, past, future: [] };
}

/** Replaces the active shape, recording the previous state for undo. */
function commit(state: EditorState, shape: Shape, key = state.active): EditorState {
  if (!(key in state.shapes)) return state;
  return commitShapes(state, { ...state.shapes, [key]: shape });
}

export function activeShape(state: EditorState): Shape | undefined {
  return state.shapes[state.active];
}

export function setActive(state: EditorState, appId: string): EditorState {
  return appId in state.shapes ? { ...state, active: appId } : state;
}

const same = (a: SourcePoint, b: SourcePoint) => a[0] === b[0] && a[1] === b[1];
const distance = (a: SourcePoint, b: SourcePoint) => Math.hypot(a[0] - b[0], a[1] - b[1]);

/**
 * Adds a point to the active shape while it is being drawn. A click within `closeRadius` of a
 * region's first point (3+ points) closes it; a line is finished by its second point.
 */
export function addPoint(state: EditorState, point: SourcePoint, closeRadius = 0): EditorState {
  const shape = activeShape(state);
  if (!shape || shape.closed) return state;
  const last = shape.points.at(-1);
  if (last && same(last, point)) return state;
  const first = shape.points[0];
  if (shape.kind === 'region' && first && shape.points.length >= 3 && distance(first, point) <= closeRadius) {
    return commit(state, { ...shape, closed: true });
  }
  const points = [...shape.points, point];
  return commit(state, { ...shape, points, closed: points.length === FIXED_POINTS[shape.kind] });
}

/** Closes the region being drawn (Enter, or a click on its first point). */
export function closeShape(state: EditorState): EditorState {
  const shape = activeShape(state);
  if (!shape || shape.closed || shape.kind !== 'region' || shape.points.length < 3) return state;
  return commit(state, { ...shape, closed: true });
}

export function moveVertex(state: EditorState, index: number, point: SourcePoint): EditorState {
  const shape = activeShape(state);
  const current = shape?.points[index];
  if (!shape || !current || same(current, point)) return state;
  const points = shape.points.map((p, i) => (i === index ? point : p));
  return commit(state, { ...shape, points });
}

/** Inserts a point on the edge from vertex `edge` to the next one (the closing edge included). */
export function insertVertex(state: EditorState, edge: number, point: SourcePoint): EditorState {
  const shape = activeShape(state);
  if (shape?.kind !== 'region' || edge < 0 || edge >= shape.points.length) return state;
  const points = [...shape.points];
  points.splice(edge + 1, 0, point);
  return commit(state, { ...shape, points });
}

/** Deletes a vertex; a region left with fewer than 3 points (a line with fewer than 2) is reopened. */
export function deleteVertex(state: EditorState, index: number): EditorState {
  const shape = activeShape(state);
  if (!shape || index < 0 || index >= shape.points.length) return state;
  const points = shape.points.filter((_, i) => i !== index);
  const closed = shape.closed && points.length >= leastPoints(shape.kind);
  return commit(state, { ...shape, points, closed });
}

/** Removes the active app's polygon: the app covers the whole frame again. */
export function clearShape(state: EditorState): EditorState {
  const shape = activeShape(state);
  if (!shape || shape.points.length === 0) return state;
  return commit(state, { ...shape, points: [], closed: false });
}

/** Switches a time-series app between a region (loitering) and a counting line; starts afresh. */
export function setKind(state: EditorState, kind: ShapeKind): EditorState {
  const shape = activeShape(state);
  if (!shape || shape.area || shape.kind === kind) return state;
  return commit(state, { kind, points: [], closed: false });
}

/** Sets the direction of the active counting line. */
export function setDirection(state: EditorState, direction: LineDirection): EditorState {
  const shape = activeShape(state);
  if (shape?.kind !== 'line' || (shape.direction ?? 'both') === direction) return state;
  return commit(state, { ...shape, direction });
}

/** The direction a counting line's config carries: null for any other shape or a line being drawn. */
export function lineDirectionOf(shape: Shape): LineDirection | null {
  return shape.kind === 'line' && shape.closed && shape.points.length === 2
    ? (shape.direction ?? 'both')
    : null;
}

/** Sets the active shape's points at once (typed in as text); complete shapes come back closed. */
export function setPoints(state: EditorState, points: SourcePoint[]): EditorState {
  const shape = activeShape(state);
  if (!shape) return state;
  const closed = points.length >= leastPoints(shape.kind);
  const fixed = FIXED_POINTS[shape.kind];
  const kept = fixed ? points.slice(0, fixed) : points;
  return commit(state, { ...shape, points: kept, closed });
}

export function undo(state: EditorState): EditorState {
  const previous = state.past.at(-1);
  if (!previous) return state;
  return {
    ...state,
    shapes: previous.shapes,
    past: state.past.slice(0, -1),
    future: [{ shapes: state.shapes }, ...state.future],
  };
}

export function redo(state: EditorState): EditorState {
  const next = state.future[0];
  if (!next) return state;
  return {
    ...state,
    shapes: next.shapes,
    past: [...state.past, { shapes: state.shapes }],
    future: state.future.slice(1),
  };
}

/** The polygon to send for a shape: [] for none (whole frame), null while it is still being drawn. */
export function polygonOf(shape: Shape): Polygon | null {
  if (shape.points.length === 0) return [];
  return shape.closed ? shape.points.map(([x, y]) => [x, y]) : null;
}

export type ShapeProblem = { kind: 'drawing' } | { kind: 'invalid'; message: string } | null;

/**
 * What keeps a shape from being saved: still being drawn, or the engine's own polygon check
 * (engine/tasks/polygon.ts: crossing edges, no area, a line for a non-time-series app).
 */
export function shapeProblem(shape: Shape, appType: number): ShapeProblem {
  const polygon = polygonOf(shape);
  if (polygon === null) return { kind: 'drawing' };
  const message = polygonProblem(polygon, appType as 1 | 2 | 3);
  return message ? { kind: 'invalid', message } : null;
}

export interface SnapOptions {
  /** Snap distance in source pixels. */
  radius: number;
  frame: { width: number; height: number };
  /** The vertex being dragged (its shape's key), which must not snap to itself. */
  exclude?: { appId: string; index: number };
}

/**
 * Snaps a point to the nearest vertex of any shape within the radius, else each coordinate to the
 * frame's edge within the radius. Shapes of neighbouring zones can so share edges exactly.
 */
export function snapPoint(state: EditorState, point: SourcePoint, options: SnapOptions): SourcePoint {
  let best: SourcePoint | null = null;
  let bestDistance = options.radius;
  for (const [appId, shape] of Object.entries(state.shapes)) {
    shape.points.forEach((vertex, index) => {
      if (options.exclude && options.exclude.appId === appId && options.exclude.index === index) return;
      const d = distance(vertex, point);
      if (d <= bestDistance) {
        best = vertex;
        bestDistance = d;
      }
    });
  }
  if (best) return [best[0], best[1]];
  const edge = (value: number, max: number) =>
    value <= options.radius ? 0 : max - value <= options.radius ? max : value;
  return [edge(point[0], options.frame.width), edge(point[1], options.frame.height)];
}

/** The point of segment ab nearest to p. */
export function projectOnSegment(p: SourcePoint, a: SourcePoint, b: SourcePoint): SourcePoint {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const lengthSquared = dx * dx + dy * dy;
  const t =
    lengthSquared === 0
      ? 0
      : Math.min(1, Math.max(0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / lengthSquared));
  return [a[0] + t * dx, a[1] + t * dy];
}

/** The edge of a closed region nearest to p: its start index and the nearest point on it. */
export function nearestEdge(
  points: readonly SourcePoint[],
  p: SourcePoint,
): { edge: number; point: SourcePoint; distance: number } | null {
  if (points.length < 2) return null;
  let found: { edge: number; point: SourcePoint; distance: number } | null = null;
  points.forEach((a, i) => {
    const b = points[(i + 1) % points.length] as SourcePoint;
    const point = projectOnSegment(p, a, b);
    const d = distance(point, p);
    if (!found || d < found.distance) found = { edge: i, point, distance: d };
  });
  return found;
}

/** "x,y x,y ..." (also with ; or new lines between points); null when the text is not that. */
export function parsePoints(text: string): SourcePoint[] | null {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const points: SourcePoint[] = [];
  for (const part of trimmed.split(/[\s;]+/)) {
    const match = /^(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)$/.exec(part);
    if (!match) return null;
    points.push([Number(match[1]), Number(match[2])]);
  }
  return points;
}

export function formatPoints(points: ReadonlyArray<readonly number[]>): string {
  const round = (value: number | undefined) => Math.round((value ?? 0) * 100) / 100;
  return points.map(([x, y]) => `${round(x)},${round(y)}`).join(' ');
}
