import { describe, expect, it } from 'vitest';
import {
  addArea,
  areaKeyOfField,
  areaKeys,
  areaProblem,
  configOf,
  editorWithAreas,
  lengthReferenceOf,
  measuredMetres,
  removeArea,
  renameZone,
  setGround,
} from '../renderer/src/geometry/areas';
import { addPoint, createEditor, type EditorState, undo } from '../renderer/src/geometry/editor';

/** Zones, masks and the ground calibration as shapes of the polygon editor, and what is sent of them. */
const APP = { app_id: 'person', type: 1 };

function draw(state: EditorState, points: Array<[number, number]>): EditorState {
  return points.reduce((current, point) => addPoint(current, point, 10), state);
}

/** Draws a closed region on the active shape: its points, then a click on the first. */
const region = (state: EditorState, points: Array<[number, number]>) =>
  draw(state, [...points, points[0] as [number, number]]);

const LEFT: Array<[number, number]> = [
  [10, 10],
  [300, 10],
  [300, 500],
  [10, 500],
];
const RIGHT: Array<[number, number]> = [
  [400, 10],
  [700, 10],
  [700, 500],
];
const MASK: Array<[number, number]> = [
  [600, 400],
  [700, 400],
  [700, 560],
  [600, 560],
];

function typeGround(state: EditorState, key: string, ground: Array<[number, number]>): EditorState {
  return ground.reduce(
    (current, [x, y], mark) =>
      setGround(setGround(current, key, mark, 0, String(x)), key, mark, 1, String(y)),
    state,
  );
}

describe('zones and masks', () => {
  it('sends the drawn zones (named, in order) and masks with the app polygon', () => {
    let state = createEditor([APP], []);
    state = region(addArea(state, 'person', 'zone', 'entrance'), LEFT);
    state = region(addArea(state, 'person', 'zone', 'Zone 2'), RIGHT);
    state = region(addArea(state, 'person', 'mask'), MASK);
    state = renameZone(state, areaKeys(state, 'person', 'zone')[1] as string, ' exit ');
    expect(configOf(state, APP)).toEqual({
      app_id: 'person',
      polygon: [],
      zones: [
        { name: 'entrance', polygon: LEFT },
        { name: 'exit', polygon: RIGHT },
      ],
      masks: [MASK],
    });
  });

  it('holds the config back while a zone is drawn, unnamed, named twice or crossing itself', () => {
    let state = addArea(createEditor([APP], []), 'person', 'zone', 'a');
    const first = state.active;
    expect(areaProblem(state, first)).toEqual({ kind: 'drawing' });
    expect(configOf(state, APP)).toBeNull();
    state = region(state, LEFT);
    state = region(addArea(state, 'person', 'zone', 'a'), RIGHT);
    const second = state.active;
    // The later of two zones of one name is refused, as the engine refuses zones[1].name.
    expect([areaProblem(state, first), areaProblem(state, second)]).toEqual([
      null,
      { kind: 'name', message: 'duplicate' },
    ]);
    expect(areaProblem(renameZone(state, second, '  '), second)).toEqual({ kind: 'name', message: 'empty' });
    const crossed = region(addArea(state, 'person', 'mask'), [
      [0, 0],
      [100, 100],
      [100, 0],
      [0, 100],
    ]);
    expect(areaProblem(crossed, crossed.active)).toEqual({
      kind: 'invalid',
      message: 'the polygon crosses itself',
    });
  });

  it('deletes a zone (undone by undo) and selects its app again', () => {
    let state = region(addArea(createEditor([APP], []), 'person', 'zone', 'a'), LEFT);
    const key = state.active;
    const removed = removeArea(state, key);
    expect([removed.active, areaKeys(removed, 'person', 'zone')]).toEqual(['person', []]);
    state = undo(removed);
    expect(areaKeys(state, 'person', 'zone')).toEqual([key]);
  });

  it('reads the engine’s config back into the same config', () => {
    const config = {
      app_id: 'person',
      polygon: [
        [0, 0],
        [768, 0],
        [768, 576],
      ],
      zones: [{ name: 'left', polygon: LEFT }],
      masks: [MASK],
      calibration: {
        image: [
          [100, 500],
          [600, 500],
          [500, 200],
          [200, 200],
        ],
        ground: [
          [0, 0],
          [7, 0],
          [7, 20],
          [0, 20],
        ],
      },
    };
    expect(configOf(editorWithAreas([APP], [config]), APP)).toEqual(config);
  });

  it('names the shape an engine refusal points at', () => {
    let state = region(
      addArea(createEditor([APP, { app_id: 'car', type: 1 }], []), 'car', 'zone', 'a'),
      LEFT,
    );
    state = region(addArea(state, 'car', 'zone', 'b'), RIGHT);
    state = region(addArea(state, 'car', 'mask'), MASK);
    const [, b] = areaKeys(state, 'car', 'zone');
    const [mask] = areaKeys(state, 'car', 'mask');
    expect([
      areaKeyOfField(state, ['person', 'car'], 'app_configs.1.zones.1.polygon'),
      areaKeyOfField(state, ['person', 'car'], 'app_configs.1.masks.0'),
      areaKeyOfField(state, ['person', 'car'], 'app_configs.0.zones.0.name'),
      areaKeyOfField(state, ['person', 'car'], 'app_configs.1.polygon'),
    ]).toEqual([b, mask, null, null]);
  });
});

describe('the ground calibration', () => {
  /** A 100 px square seen straight down as 10 m × 10 m: 0.1 m a pixel. */
  const MARKS: Array<[number, number]> = [
    [100, 100],
    [200, 100],
    [200, 200],
    [100, 200],
  ];
  const GROUND: Array<[number, number]> = [
    [0, 0],
    [10, 0],
    [10, 10],
    [0, 10],
  ];

  it('takes four marks and their typed metres, and sends them as the calibration', () => {
    let state = draw(addArea(createEditor([APP], []), 'person', 'calibration'), MARKS);
    const key = state.active;
    expect(state.shapes[key]?.closed).toBe(true);
    expect(areaProblem(state, key)).toEqual({ kind: 'ground' });
    state = typeGround(state, key, GROUND);
    expect(configOf(state, APP)).toEqual({
      app_id: 'person',
      polygon: [],
      zones: [],
      masks: [],
      calibration: { image: MARKS, ground: GROUND },
    });
    // One calibration an app: asking again selects it.
    expect(Object.keys(addArea(state, 'person', 'calibration').shapes)).toEqual(Object.keys(state.shapes));
  });

  it('refuses marks of which three lie on one line, as the engine does', () => {
    let state = draw(addArea(createEditor([APP], []), 'person', 'calibration'), [
      [100, 100],
      [200, 100],
      [300, 100],
      [100, 200],
    ]);
    state = typeGround(state, state.active, GROUND);
    expect(areaProblem(state, state.active)).toEqual({
      kind: 'invalid',
      message: 'three of the four points (image or ground) lie on one line',
    });
    expect(configOf(state, APP)).toBeNull();
  });

  it('measures a drawn segment through the calibration, else the length reference', () => {
    const reference = { pixels: 50, meters: 2 };
    let state = draw(addArea(createEditor([APP], []), 'person', 'measure'), [
      [100, 100],
      [130, 140],
    ]);
    expect(measuredMetres(state, 'person', undefined)).toBeNull();
    expect(measuredMetres(state, 'person', reference)).toBeCloseTo(2, 9);
    state = draw(addArea(state, 'person', 'calibration'), MARKS);
    // An unfinished calibration is not sent: the length reference still applies.
    expect(measuredMetres(state, 'person', reference)).toBeCloseTo(2, 9);
    state = typeGround(state, state.active, GROUND);
    expect(measuredMetres(state, 'person', reference)).toBeCloseTo(5, 9);
    // The measure segment is never sent.
    expect(configOf(state, APP)?.calibration).toEqual({ image: MARKS, ground: GROUND });
  });

  it('reads the package’s length reference from the listed rule, when valid', () => {
    expect([
      lengthReferenceOf({ interval: 0, length_reference: { pixels: 200, meters: 5 } }),
      lengthReferenceOf({ interval: 0, length_reference: { pixels: 0, meters: 5 } }),
      lengthReferenceOf({ interval: 0 }),
      lengthReferenceOf(undefined),
    ]).toEqual([{ pixels: 200, meters: 5 }, undefined, undefined, undefined]);
  });
});
