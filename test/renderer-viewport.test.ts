import { describe, expect, it } from 'vitest';
import {
  clampView,
  fitContain,
  isOnFrame,
  MAX_ZOOM,
  panBy,
  resizeView,
  toDisplay,
  toSource,
  toSourcePixel,
  zoomAt,
} from '../renderer/src/geometry/viewport';

/** The mapping between the canvas the operator draws on and the source frame's pixels. */
const SOURCE = { width: 768, height: 576 };

describe('letterboxed fit', () => {
  it('bars left and right in a wide box, the frame centred', () => {
    const view = fitContain(SOURCE, { width: 1000, height: 600 });
    expect(view.scale).toBeCloseTo(600 / 576, 10);
    expect(view.offsetY).toBe(0);
    expect(view.offsetX).toBeCloseTo((1000 - 768 * (600 / 576)) / 2, 10);
    expect(toDisplay({ x: 0, y: 0 }, view)).toEqual({ x: view.offsetX, y: 0 });
    const corner = toDisplay({ x: 768, y: 576 }, view);
    expect(corner.x).toBeCloseTo(1000 - view.offsetX, 10);
    expect(corner.y).toBeCloseTo(600, 10);
  });

  it('bars above and below in a tall box', () => {
    const view = fitContain({ width: 1920, height: 1080 }, { width: 800, height: 800 });
    expect(view.scale).toBeCloseTo(800 / 1920, 10);
    expect(view.offsetX).toBe(0);
    expect(view.offsetY).toBeCloseTo((800 - 450) / 2, 10);
  });

  it('an unknown size maps one to one rather than dividing by zero', () => {
    expect(fitContain({ width: 0, height: 0 }, { width: 800, height: 600 })).toEqual({
      scale: 1,
      offsetX: 0,
      offsetY: 0,
    });
  });
});

describe('display <-> source', () => {
  const view = fitContain(SOURCE, { width: 1011, height: 631 });

  it('round-trips any point exactly', () => {
    for (const point of [
      { x: 0, y: 0 },
      { x: 383.5, y: 287.25 },
      { x: 768, y: 576 },
      { x: 12.125, y: 570 },
    ]) {
      const back = toSource(toDisplay(point, view), view);
      expect(back.x).toBeCloseTo(point.x, 9);
      expect(back.y).toBeCloseTo(point.y, 9);
    }
  });

  it('a click becomes the integer source pixel under it; clicks on the bars land on the edge', () => {
    const at = toDisplay({ x: 153.4, y: 144.6 }, view);
    expect(toSourcePixel(at, view, SOURCE)).toEqual([153, 145]);
    expect(toSourcePixel({ x: 1, y: 0 }, view, SOURCE)).toEqual([0, 0]);
    expect(toSourcePixel({ x: 1010, y: 631 }, view, SOURCE)).toEqual([768, 576]);
    expect(isOnFrame({ x: 1, y: 300 }, view, SOURCE)).toBe(false);
    expect(isOnFrame(at, view, SOURCE)).toBe(true);
  });
});

describe('zoom and pan while drawing', () => {
  const box = { width: 1000, height: 600 };
  const fit = fitContain(SOURCE, box);

  it('zooming keeps the source point under the cursor where it is', () => {
    const cursor = { x: 420, y: 250 };
    const under = toSource(cursor, fit);
    const zoomed = zoomAt(fit, 1.2 ** 3, cursor, SOURCE, box);
    expect(zoomed.scale / fit.scale).toBeCloseTo(1.728, 10);
    const after = toDisplay(under, zoomed);
    expect(after.x).toBeCloseTo(cursor.x, 9);
    expect(after.y).toBeCloseTo(cursor.y, 9);
    // The mapping stays exact at any zoom.
    expect(toSourcePixel(toDisplay({ x: 600, y: 100 }, zoomed), zoomed, SOURCE)).toEqual([600, 100]);
  });

  it('zoom stays between the fit and MAX_ZOOM times it', () => {
    expect(zoomAt(fit, 0.2, { x: 500, y: 300 }, SOURCE, box)).toEqual(fit);
    const deep = zoomAt(fit, 1000, { x: 500, y: 300 }, SOURCE, box);
    expect(deep.scale).toBeCloseTo(fit.scale * MAX_ZOOM, 10);
  });

  it('a zoomed frame cannot be panned out of the box; a fitted one stays centred', () => {
    const zoomed = zoomAt(fit, 2, { x: 500, y: 300 }, SOURCE, box);
    const far = panBy(zoomed, 10_000, -10_000, SOURCE, box);
    expect(far.offsetX).toBe(0);
    expect(far.offsetY).toBeCloseTo(box.height - SOURCE.height * zoomed.scale, 9);
    expect(panBy(fit, 50, 50, SOURCE, box)).toEqual(clampView(fit, SOURCE, box));
    expect(panBy(fit, 50, 50, SOURCE, box).offsetX).toBeCloseTo(fit.offsetX, 9);
  });

  it('a resized window keeps the zoom relative to the fit and the centre of the view', () => {
    const zoomed = zoomAt(fit, 2, { x: 300, y: 200 }, SOURCE, box);
    const centre = toSource({ x: 500, y: 300 }, zoomed);
    const smaller = { width: 700, height: 500 };
    const resized = resizeView(zoomed, SOURCE, box, smaller);
    expect(resized.scale / fitContain(SOURCE, smaller).scale).toBeCloseTo(2, 9);
    const newCentre = toSource({ x: 350, y: 250 }, resized);
    expect(newCentre.x).toBeCloseTo(centre.x, 6);
    expect(newCentre.y).toBeCloseTo(centre.y, 6);
    // Fitted before, fitted after.
    expect(resizeView(fit, SOURCE, box, smaller)).toEqual(fitContain(SOURCE, smaller));
  });
});
