/**
 * An app's zones, masks and ground calibration (app_configs[] extensions, docs/api.md 6.5) as shapes
 * of the polygon editor (./editor), so that drawing, snapping and undo work the same on them. Each is
 * keyed `<app_id> NUL <role> NUL <n>`; an app's own polygon stays keyed by its app_id. A measure
 * segment (never sent) lets the operator check the calibration against a known length.
 */

import type { Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { AppConfig, AppConfigUpdate } from '../../../engine/contract';
import { groundMap, LengthReference, polygonProblem } from '../../../engine/contract';
import type { Translate } from '../i18n';
import {
  type AreaTag,
  commitShapes,
  createEditor,
  type EditorApp,
  type EditorState,
  lineDirectionOf,
  polygonOf,
  type Shape,
  type SourcePoint,
  shapeProblem,
} from './editor';

type Role = AreaTag['role'];
type Zone = NonNullable<AppConfig['zones']>[number];
type Calibration = NonNullable<AppConfig['calibration']>;

const SEP = '\u0000';
const EMPTY_GROUND: ReadonlyArray<readonly [string, string]> = [
  ['', ''],
  ['', ''],
  ['', ''],
  ['', ''],
];

/** The app a shape belongs to: its tag's, or the key itself for an app's polygon. */
export function ownerOf(state: EditorState, key: string): string {
  return state.shapes[key]?.area?.app ?? key;
}

/** The keys of an app's shapes of one role, in the order they are sent. */
export function areaKeys(state: EditorState, appId: string, role: Role): string[] {
  return Object.entries(state.shapes)
    .filter(([, shape]) => shape.area?.app === appId && shape.area.role === role)
    .map(([key]) => key);
}

function freshKey(state: EditorState, appId: string, role: Role): string {
  let n = 1;
  while (`${appId}${SEP}${role}${SEP}${n}` in state.shapes) n++;
  return `${appId}${SEP}${role}${SEP}${n}`;
}

const kindOf = (role: Role): Shape['kind'] =>
  role === 'calibration' ? 'marks' : role === 'measure' ? 'line' : 'region';

function areaShape(area: AreaTag, polygon: readonly (readonly number[])[] = []): Shape {
  const kind = kindOf(area.role);
  const points = polygon.map(([x = 0, y = 0]) => [x, y] as SourcePoint);
  return { kind, points, closed: points.length >= (kind === 'marks' ? 4 : 3), area };
}

/** How the wizard's problem list names a zone, mask or calibration: "Zone 1", "Mask 2 of Person". */
export function areaLabel(t: Translate, editor: EditorState, key: string, appName: string): string {
  const area = editor.shapes[key]?.area;
  if (area?.role === 'zone') return t('areas.toolsZone', { name: area.name ?? '', app: appName });
  if (area?.role === 'mask') {
    return t('areas.toolsMask', { n: areaKeys(editor, area.app, 'mask').indexOf(key) + 1, app: appName });
  }
  return t('areas.toolsCalibration', { app: appName });
}

/** "Zone 1", "Zone 2": the first name of the form not taken in the app. */
export function nextZoneName(state: EditorState, appId: string, prefix: string): string {
  const taken = new Set(areaKeys(state, appId, 'zone').map((key) => state.shapes[key]?.area?.name));
  let n = 1;
  while (taken.has(`${prefix} ${n}`)) n++;
  return `${prefix} ${n}`;
}

/**
 * Adds an empty shape to an app and makes it the one being drawn. An app has one calibration and
 * one measure segment: asking again selects the existing one.
 */
export function addArea(state: EditorState, appId: string, role: Role, name?: string): EditorState {
  if (!(appId in state.shapes)) return state;
  const single = role === 'calibration' || role === 'measure';
  const existing = single ? areaKeys(state, appId, role)[0] : undefined;
  if (existing) return { ...state, active: existing };
  const key = freshKey(state, appId, role);
  const area: AreaTag = {
    app: appId,
    role,
    ...(role === 'zone' ? { name: name ?? '' } : {}),
    ...(role === 'calibration' ? { ground: EMPTY_GROUND } : {}),
  };
  return { ...commitShapes(state, { ...state.shapes, [key]: areaShape(area) }), active: key };
}

/** Deletes a zone, mask, calibration or measure; its app's polygon becomes the active shape. */
export function removeArea(state: EditorState, key: string): EditorState {
  const shape = state.shapes[key];
  if (!shape?.area) return state;
  const { [key]: _removed, ...shapes } = state.shapes;
  const next = commitShapes(state, shapes);
  return state.active === key ? { ...next, active: shape.area.app } : next;
}

function retag(state: EditorState, key: string, change: Partial<AreaTag>): EditorState {
  const shape = state.shapes[key];
  if (!shape?.area) return state;
  return commitShapes(state, { ...state.shapes, [key]: { ...shape, area: { ...shape.area, ...change } } });
}

export function renameZone(state: EditorState, key: string, name: string): EditorState {
  return state.shapes[key]?.area?.name === name ? state : retag(state, key, { name });
}

/** Types one coordinate (0 x, 1 y) of a calibration mark's ground position. */
export function setGround(
  state: EditorState,
  key: string,
  mark: number,
  axis: 0 | 1,
  text: string,
): EditorState {
  const ground = state.shapes[key]?.area?.ground;
  if (!ground?.[mark]) return state;
  return retag(state, key, {
    ground: ground.map((pair, i) =>
      i === mark ? (axis === 0 ? ([text, pair[1]] as const) : ([pair[0], text] as const)) : pair,
    ),
  });
}

/** The ground metres typed for a calibration; null while one is missing or not a number. */
export function groundOf(shape: Shape): number[][] | null {
  const values = (shape.area?.ground ?? []).map((pair) =>
    pair.map((text) => (text.trim() === '' ? Number.NaN : Number(text))),
  );
  return values.length === 4 && values.every((pair) => pair.every(Number.isFinite)) ? values : null;
}

/** Messages the engine gives for the same problems (engine/tasks/validation.ts). */
const NEEDS_AREA = 'a zone or mask needs at least 3 points';
const COLLINEAR = 'three of the four points (image or ground) lie on one line';

export type AreaProblem =
  | { kind: 'drawing' }
  | { kind: 'invalid'; message: string }
  | { kind: 'name'; message: 'empty' | 'duplicate' }
  | { kind: 'ground' };

/** What keeps a zone, mask or calibration from being sent; null when it can be (or is a measure). */
export function areaProblem(state: EditorState, key: string): AreaProblem | null {
  const shape = state.shapes[key];
  const area = shape?.area;
  if (!shape || !area || area.role === 'measure') return null;
  if (area.role === 'zone') {
    const name = area.name?.trim() ?? '';
    if (name === '') return { kind: 'name', message: 'empty' };
    // Like the engine, the later of two zones of one name is the one refused.
    const zones = areaKeys(state, area.app, 'zone');
    const earlier = zones.slice(0, zones.indexOf(key));
    if (earlier.some((other) => state.shapes[other]?.area?.name?.trim() === name))
      return { kind: 'name', message: 'duplicate' };
  }
  if (!shape.closed) return { kind: 'drawing' };
  if (area.role === 'calibration') {
    const ground = groundOf(shape);
    if (!ground) return { kind: 'ground' };
    return groundMap({ image: shape.points, ground }, undefined)
      ? null
      : { kind: 'invalid', message: COLLINEAR };
  }
  const polygon = polygonOf(shape) ?? [];
  const message = polygon.length < 3 ? NEEDS_AREA : polygonProblem(polygon, 1);
  return message ? { kind: 'invalid', message } : null;
}

/**
 * The app's config for app_configs[]: its polygon, zones, masks and calibration; null while any of
 * them cannot be sent (being drawn, invalid).
 */
export function configOf(state: EditorState, app: EditorApp): AppConfig | null {
  const own = state.shapes[app.app_id];
  if (!own || shapeProblem(own, app.type)) return null;
  const keys = Object.keys(state.shapes).filter((key) => state.shapes[key]?.area?.app === app.app_id);
  if (keys.some((key) => areaProblem(state, key))) return null;
  const zones: Zone[] = areaKeys(state, app.app_id, 'zone').map((key) => {
    const shape = state.shapes[key] as Shape;
    return { name: shape.area?.name?.trim() ?? '', polygon: polygonOf(shape) ?? [] };
  });
  const masks = areaKeys(state, app.app_id, 'mask').map((key) => polygonOf(state.shapes[key] as Shape) ?? []);
  const calibration = calibrationOf(state, app.app_id);
  const direction = lineDirectionOf(own);
  return {
    app_id: app.app_id,
    polygon: polygonOf(own) ?? [],
    ...(direction && { line_direction: direction }),
    zones,
    masks,
    ...(calibration ? { calibration } : {}),
  };
}

/**
 * The config as an update (4.7), which carries all of the app's areas: a calibration the editor has
 * not is sent as null, so that one the task has is removed.
 */
export function updateOf(config: AppConfig): AppConfigUpdate {
  return config.calibration ? config : { ...config, calibration: null };
}

/** The editor for a task's apps with everything the engine has: polygons, zones, masks, calibration. */
export function editorWithAreas(apps: readonly EditorApp[], configs: readonly AppConfig[]): EditorState {
  const base = createEditor(apps, configs);
  const shapes: Record<string, Shape> = { ...base.shapes };
  let n = 0;
  const put = (shape: Shape) => {
    n++;
    shapes[`${shape.area?.app}${SEP}${shape.area?.role}${SEP}${n}`] = shape;
  };
  for (const config of configs) {
    if (!(config.app_id in shapes)) continue;
    const app = config.app_id;
    for (const zone of config.zones ?? [])
      put(areaShape({ app, role: 'zone', name: zone.name }, zone.polygon));
    for (const mask of config.masks ?? []) put(areaShape({ app, role: 'mask' }, mask));
    const calibration = config.calibration;
    if (calibration) {
      const ground = calibration.ground.map(([x = 0, y = 0]) => [String(x), String(y)] as const);
      put(areaShape({ app, role: 'calibration', ground }, calibration.image));
    }
  }
  return { ...base, shapes };
}

/** Every app's finished config, for rebuilding the editor when the task's apps change. */
export function finishedConfigs(state: EditorState, apps: readonly EditorApp[]): AppConfig[] {
  return apps.flatMap((app) => {
    const config = configOf(state, app);
    return config ? [config] : [];
  });
}

/** The app's calibration as typed and drawn, once all four marks and their metres are there. */
function calibrationOf(state: EditorState, appId: string): Calibration | null {
  const key = areaKeys(state, appId, 'calibration')[0];
  const shape = key ? state.shapes[key] : undefined;
  const ground = shape?.closed ? groundOf(shape) : null;
  return shape && ground ? { image: shape.points, ground } : null;
}

/**
 * The ground length in metres of the app's measure segment, through the calibration being edited,
 * else the package's length_reference, as the engine maps foot points; null without either.
 */
export function measuredMetres(
  state: EditorState,
  appId: string,
  lengthReference: { pixels: number; meters: number } | undefined,
): number | null {
  const key = areaKeys(state, appId, 'measure')[0];
  const shape = key ? state.shapes[key] : undefined;
  const toGround = groundMap(calibrationOf(state, appId) ?? undefined, lengthReference);
  const [a, b] = shape?.points ?? [];
  if (!a || !b || !toGround) return null;
  const [ax, ay] = toGround(a);
  const [bx, by] = toGround(b);
  return Math.hypot(bx - ax, by - ay);
}

/**
 * The shape an engine refusal names: `app_configs.<i>.zones.<j>…`, `….masks.<k>`, `….calibration`
 * (dotted, as fieldPath gives it) of a body whose configs were `appIds`, in order; null for others.
 */
export function areaKeyOfField(state: EditorState, appIds: readonly string[], path: string): string | null {
  const match = /^app_configs\.(\d+)\.(zones|masks|calibration)(?:\.(\d+))?/.exec(path);
  const appId = match ? appIds[Number(match[1])] : undefined;
  if (!match || appId === undefined) return null;
  if (match[2] === 'calibration') return areaKeys(state, appId, 'calibration')[0] ?? null;
  return areaKeys(state, appId, match[2] === 'zones' ? 'zone' : 'mask')[Number(match[3])] ?? null;
}

/** The listed rule's length_reference (package manifest), when it has a valid one. */
export function lengthReferenceOf(rule: unknown): Static<typeof LengthReference> | undefined {
  const value = (rule as { length_reference?: unknown } | null)?.length_reference;
  return Value.Check(LengthReference, value) ? value : undefined;
}
