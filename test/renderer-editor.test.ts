import { describe, expect, it } from 'vitest';
import {
  activeShape,
  addPoint,
  clearShape,
  closeShape,
  createEditor,
  deleteVertex,
  type EditorState,
  formatPoints,
  insertVertex,
  moveVertex,
  nearestEdge,
  parsePoints,
  polygonOf,
  redo,
  setActive,
  setKind,
  setPoints,
  shapeProblem,
  snapPoint,
  undo,
} from '../renderer/src/geometry/editor';

/** The polygon editor's model: what clicks, drags and keys do to the shapes, in source pixels. */
const APPS = [
  { app_id: 'person', type: 1 },
  { app_id: 'loiter', type: 3 },
];
const FRAME = { width: 768, height: 576 };

function draw(state: EditorState, points: Array<[number, number]>): EditorState {
  return points.reduce((current, point) => addPoint(current, point, 10), state);
}

const SQUARE: Array<[number, number]> = [
  [100, 100],
  [300, 100],
  [300, 300],
  [100, 300],
];

describe('drawing', () => {
  it('starts from the engine polygons: a region, a line, nothing', () => {
    const editor = createEditor(APPS, [
      { app_id: 'person', polygon: SQUARE },
      {
        app_id: 'loiter',
        polygon: [
          [0, 200],
          [768, 200],
        ],
      },
    ]);
    expect(editor.shapes.person).toEqual({ kind: 'region', points: SQUARE, closed: true });
    expect(editor.shapes.loiter).toMatchObject({ kind: 'line', closed: true });
    expect(createEditor(APPS, []).shapes.person).toEqual({ kind: 'region', points: [], closed: false });
  });

  it('clicks add points; a click near the first point closes the region', () => {
    let editor = draw(createEditor(APPS, []), SQUARE);
    expect(activeShape(editor)).toMatchObject({ closed: false, points: SQUARE });
    expect(polygonOf(activeShape(editor) ?? { kind: 'region', points: [], closed: false })).toBeNull();
    editor = addPoint(editor, [104, 96], 10);
    expect(activeShape(editor)).toEqual({ kind: 'region', points: SQUARE, closed: true });
    // A finished region takes no more points.
    expect(addPoint(editor, [500, 500], 10)).toBe(editor);
  });

  it('a point on the previous one is ignored; Enter closes only a region of 3 points or more', () => {
    let editor = draw(createEditor(APPS, []), [
      [10, 10],
      [10, 10],
      [50, 10],
    ]);
    expect(activeShape(editor)?.points).toHaveLength(2);
    expect(closeShape(editor)).toBe(editor);
    editor = closeShape(addPoint(editor, [50, 50], 10));
    expect(activeShape(editor)?.closed).toBe(true);
  });

  it('a counting line of a time-series app is finished by its second point', () => {
    let editor = setKind(setActive(createEditor(APPS, []), 'loiter'), 'line');
    editor = draw(editor, [
      [0, 300],
      [768, 320],
    ]);
    expect(activeShape(editor)).toEqual({
      kind: 'line',
      points: [
        [0, 300],
        [768, 320],
      ],
      closed: true,
    });
    expect(shapeProblem(activeShape(editor) as never, 3)).toBeNull();
  });
});

describe('editing', () => {
  const closed = () => createEditor(APPS, [{ app_id: 'person', polygon: SQUARE }]);

  it('moves, inserts on an edge (the closing edge too) and deletes vertices', () => {
    let editor = moveVertex(closed(), 2, [320, 310]);
    expect(activeShape(editor)?.points[2]).toEqual([320, 310]);
    editor = insertVertex(editor, 3, [100, 200]);
    expect(activeShape(editor)?.points).toEqual([
      [100, 100],
      [300, 100],
      [320, 310],
      [100, 300],
      [100, 200],
    ]);
    editor = deleteVertex(deleteVertex(editor, 4), 0);
    expect(activeShape(editor)).toMatchObject({
      closed: true,
      points: [
        [300, 100],
        [320, 310],
        [100, 300],
      ],
    });
    // Below three points the region is being drawn again.
    expect(activeShape(deleteVertex(editor, 0))?.closed).toBe(false);
  });

  it('undo and redo walk the history; a new edit drops the redo branch', () => {
    const start = closed();
    const moved = moveVertex(start, 0, [90, 90]);
    const cleared = clearShape(moved);
    expect(activeShape(cleared)?.points).toEqual([]);
    const back = undo(undo(cleared));
    expect(back.shapes).toEqual(start.shapes);
    expect(undo(back)).toEqual(back);
    expect(redo(back).shapes).toEqual(moved.shapes);
    const branched = moveVertex(undo(cleared), 1, [310, 90]);
    expect(branched.future).toHaveLength(0);
    expect(redo(branched)).toBe(branched);
  });

  it('switching apps is not an edit, and shapes of other apps stay', () => {
    const editor = setActive(closed(), 'loiter');
    expect(editor.active).toBe('loiter');
    expect(editor.past).toHaveLength(0);
    expect(setActive(editor, 'nope')).toBe(editor);
    expect(draw(editor, [[1, 1]]).shapes.person).toEqual(editor.shapes.person);
  });

  it('typed points replace the shape at once', () => {
    const editor = setPoints(createEditor(APPS, []), parsePoints('10,10 200,10; 200,200\n10,200') ?? []);
    expect(activeShape(editor)).toMatchObject({
      closed: true,
      points: [
        [10, 10],
        [200, 10],
        [200, 200],
        [10, 200],
      ],
    });
    expect(parsePoints('10,10 20')).toBeNull();
    expect(parsePoints('  ')).toEqual([]);
    expect(
      formatPoints([
        [10.123, 20],
        [5, 6.5],
      ]),
    ).toBe('10.12,20 5,6.5');
  });
});

describe('snapping', () => {
  const editor = createEditor(APPS, [{ app_id: 'person', polygon: SQUARE }]);
  const options = { radius: 8, frame: FRAME };

  it('to a vertex of any shape within the radius, else to the frame edges, else nowhere', () => {
    expect(snapPoint(editor, [305, 96], options)).toEqual([300, 100]);
    expect(snapPoint(editor, [5, 400], options)).toEqual([0, 400]);
    expect(snapPoint(editor, [765, 572], options)).toEqual([768, 576]);
    expect(snapPoint(editor, [400, 400], options)).toEqual([400, 400]);
  });

  it('a dragged vertex does not snap to itself', () => {
    expect(snapPoint(editor, [303, 102], { ...options, exclude: { appId: 'person', index: 1 } })).toEqual([
      303, 102,
    ]);
  });

  it('the nearest edge of a region and the point on it, for inserting', () => {
    expect(nearestEdge(SQUARE, [200, 95])).toEqual({ edge: 0, point: [200, 100], distance: 5 });
    expect(nearestEdge(SQUARE, [96, 250])).toMatchObject({ edge: 3, point: [100, 250] });
  });
});

describe('what the engine would refuse (its own polygon check)', () => {
  it('crossing edges, no area, a line for a detection app', () => {
    const bow = createEditor(APPS, [
      {
        app_id: 'person',
        polygon: [
          [0, 0],
          [100, 100],
          [100, 0],
          [0, 100],
        ],
      },
    ]);
    expect(shapeProblem(activeShape(bow) as never, 1)).toEqual({
      kind: 'invalid',
      message: 'the polygon crosses itself',
    });
    const flat = setPoints(createEditor(APPS, []), [
      [0, 0],
      [50, 50],
      [100, 100],
    ]);
    expect(shapeProblem(activeShape(flat) as never, 1)).toMatchObject({ kind: 'invalid' });
    const line = setPoints(setKind(createEditor(APPS, []), 'line'), [
      [0, 0],
      [100, 100],
    ]);
    expect(shapeProblem(activeShape(line) as never, 1)).toEqual({
      kind: 'invalid',
      message:
        'a 2-point counting line is only for time-series applications (type 3); a region needs at least 3 points',
    });
    expect(shapeProblem(activeShape(draw(createEditor(APPS, []), [[1, 1]])) as never, 1)).toEqual({
      kind: 'drawing',
    });
    expect(shapeProblem({ kind: 'region', points: [], closed: false }, 1)).toBeNull();
  });
});
