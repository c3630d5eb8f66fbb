/**
 * Mapping between the pixels of the source frame (what the engine's polygons are in) and the pixels
 * of the canvas the operator draws on. The frame is shown letterboxed (like object-fit: contain) in a
 * box of any size, then zoomed and panned: display = source * scale + offset. Pure, no DOM.
 */

export interface Size {
  width: number;
  height: number;
}

export interface Point {
  x: number;
  y: number;
}

/** display = source * scale + offset, in both axes (the frame's aspect ratio is kept). */
export interface View {
  scale: number;
  offsetX: number;
  offsetY: number;
}

/** The most a view zooms in past the letterboxed fit. */
export const MAX_ZOOM = 16;

function validSize(size: Size): boolean {
  return Number.isFinite(size.width) && Number.isFinite(size.height) && size.width > 0 && size.height > 0;
}

/** The frame scaled to fit the box and centred: bars left and right, or above and below. */
export function fitContain(source: Size, display: Size): View {
  if (!validSize(source) || !validSize(display)) return { scale: 1, offsetX: 0, offsetY: 0 };
  const scale = Math.min(display.width / source.width, display.height / source.height);
  return {
    scale,
    offsetX: (display.width - source.width * scale) / 2,
    offsetY: (display.height - source.height * scale) / 2,
  };
}

export function toDisplay(point: Point, view: View): Point {
  return { x: point.x * view.scale + view.offsetX, y: point.y * view.scale + view.offsetY };
}

export function toSource(point: Point, view: View): Point {
  return { x: (point.x - view.offsetX) / view.scale, y: (point.y - view.offsetY) / view.scale };
}

/**
 * A display point as the integer source pixel the engine receives, clamped into the frame
 * (a click on the letterbox bars lands on the frame's edge).
 */
export function toSourcePixel(point: Point, view: View, source: Size): [number, number] {
  const { x, y } = toSource(point, view);
  const clamp = (value: number, max: number) => Math.min(max, Math.max(0, Math.round(value)));
  return [clamp(x, source.width), clamp(y, source.height)];
}

/** Whether a display point falls on the frame itself rather than on the bars around it. */
export function isOnFrame(point: Point, view: View, source: Size): boolean {
  const { x, y } = toSource(point, view);
  return x >= 0 && y >= 0 && x <= source.width && y <= source.height;
}

/**
 * Keeps the zoom between the fit and MAX_ZOOM times it, and the frame from being panned out of
 * sight: when it is larger than the box it covers the box, when smaller it stays centred.
 */
export function clampView(view: View, source: Size, display: Size): View {
  const fit = fitContain(source, display);
  const scale = Math.min(fit.scale * MAX_ZOOM, Math.max(fit.scale, view.scale));
  const axis = (offset: number, frame: number, box: number) => {
    const extent = frame * scale;
    if (extent <= box) return (box - extent) / 2;
    return Math.min(0, Math.max(box - extent, offset));
  };
  return {
    scale,
    offsetX: axis(view.offsetX, source.width, display.width),
    offsetY: axis(view.offsetY, source.height, display.height),
  };
}

/** Zooms by `factor` around a display point (the cursor), which keeps its place on the frame. */
export function zoomAt(view: View, factor: number, anchor: Point, source: Size, display: Size): View {
  const sourceAnchor = toSource(anchor, view);
  const scale = view.scale * factor;
  return clampView(
    { scale, offsetX: anchor.x - sourceAnchor.x * scale, offsetY: anchor.y - sourceAnchor.y * scale },
    source,
    display,
  );
}

export function panBy(view: View, dx: number, dy: number, source: Size, display: Size): View {
  return clampView({ ...view, offsetX: view.offsetX + dx, offsetY: view.offsetY + dy }, source, display);
}

/**
 * The view after the box was resized (the window changed): the same zoom relative to the fit, the
 * same source point at the box's centre.
 */
export function resizeView(view: View, source: Size, before: Size, after: Size): View {
  const zoom = view.scale / fitContain(source, before).scale;
  const centre = toSource({ x: before.width / 2, y: before.height / 2 }, view);
  const scale = fitContain(source, after).scale * zoom;
  return clampView(
    { scale, offsetX: after.width / 2 - centre.x * scale, offsetY: after.height / 2 - centre.y * scale },
    source,
    after,
  );
}
