import { describe, expect, it } from 'vitest';
import { configOf, editorWithAreas } from '../renderer/src/geometry/areas';
import {
  clearShape,
  createEditor,
  setActive,
  setDirection,
  setKind,
  undo,
} from '../renderer/src/geometry/editor';
import { lineArrow } from '../renderer/src/geometry/line-arrow';

/** A counting line's direction in the region editor (issue 34, point 6): the choice, what is sent, the arrow. */
const APPS = [
  { app_id: 'person', type: 1 },
  { app_id: 'loiter', type: 3 },
];
const LINE = [
  [320, 576],
  [320, 180],
];
const LOITER = APPS[1] as (typeof APPS)[number];

describe('a line direction in the editor', () => {
  it("starts from the engine's, is sent with the line, is undone, and is never sent for a region", () => {
    const editor = setActive(
      editorWithAreas(APPS, [{ app_id: 'loiter', polygon: LINE, line_direction: 'out' }]),
      'loiter',
    );
    expect(configOf(editor, LOITER)).toMatchObject({ polygon: LINE, line_direction: 'out' });
    const turned = setDirection(editor, 'in');
    expect(configOf(turned, LOITER)?.line_direction).toBe('in');
    expect(configOf(undo(turned), LOITER)?.line_direction).toBe('out');
    // A line without one gets 'both', sent explicitly so that an update replaces a stored direction.
    const plain = setActive(createEditor(APPS, [{ app_id: 'loiter', polygon: LINE }]), 'loiter');
    expect(configOf(plain, LOITER)?.line_direction).toBe('both');
    // None while the line is cleared, none on a region, and a region takes none.
    expect(configOf(clearShape(turned), LOITER)).not.toHaveProperty('line_direction');
    const region = setKind(turned, 'region');
    expect(configOf(region, LOITER)).not.toHaveProperty('line_direction');
    expect(setDirection(region, 'out')).toBe(region);
  });
});

describe('the arrow of a line', () => {
  // Upwards on the screen from (100, 200) to (100, 100): side B is on the right.
  const a = { x: 100, y: 200 };
  const b = { x: 100, y: 100 };

  it("points to side B for 'in', side A for 'out', both for 'both', from the line's middle", () => {
    expect(lineArrow(a, b, 'in', 20)?.shaft).toEqual([100, 150, 120, 150]);
    expect(lineArrow(a, b, 'out', 20)?.shaft).toEqual([100, 150, 80, 150]);
    const both = lineArrow(a, b, 'both', 20);
    expect(both?.shaft).toEqual([80, 150, 120, 150]);
    expect(both?.heads).toHaveLength(2);
    // Each head's point is an end of the shaft.
    expect(both?.heads.map((head) => head.slice(0, 2))).toEqual([
      [120, 150],
      [80, 150],
    ]);
    expect(lineArrow(a, b, 'in', 20)?.sideB.x).toBeGreaterThan(100);
    expect(lineArrow(a, b, 'in', 20)?.sideA.x).toBeLessThan(100);
    expect(lineArrow(a, a, 'in')).toBeNull();
  });
});
