/**
 * Tags of neighbouring objects kept off each other. Each tag tries, in order: its usual place (on
 * the box's top edge, or inside the box when that leaves the frame), inside the box's top, under the
 * box, then stacked above and below its usual place; the first place free of every tag placed
 * before it wins. A tag with no free place keeps its usual one: it is still readable on top.
 */

/** An object's box in frame pixels. */
export interface PixelBox {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

/** Rows of tags a crowded tag may move up or down before it gives up. */
const MAX_STACK = 6;

interface Place {
  x: number;
  y: number;
}

/** A tag as far as placing it goes: where it is drawn and its size, in frame pixels. */
interface Tag extends Place {
  width: number;
  height: number;
}

const overlaps = (a: Tag, b: Tag) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

function candidates(label: Tag, box: PixelBox, frameWidth: number, frameHeight: number): Place[] {
  const clampY = (y: number) => Math.max(0, Math.min(y, frameHeight - label.height));
  const clampX = (x: number) => Math.max(0, Math.min(x, frameWidth - label.width));
  const places: Place[] = [
    { x: label.x, y: label.y },
    { x: label.x, y: clampY(box.y1) },
    { x: label.x, y: clampY(box.y2) },
    { x: clampX(box.x2 - label.width), y: label.y },
  ];
  for (let step = 1; step <= MAX_STACK; step++) {
    places.push({ x: label.x, y: clampY(label.y - step * label.height) });
    places.push({ x: label.x, y: clampY(label.y + step * label.height) });
  }
  return places;
}

/** The tags (null where an object has none) at places where no two overlap, where there is room. */
export function placeLabels<L extends Tag>(
  items: ReadonlyArray<{ label: L | null; box: PixelBox }>,
  frameWidth: number,
  frameHeight: number,
): Array<L | null> {
  const placed: Tag[] = [];
  return items.map(({ label, box }) => {
    if (!label) return null;
    const free = candidates(label, box, frameWidth, frameHeight).find(
      (place) =>
        !placed.some((other) => overlaps(other, { ...place, width: label.width, height: label.height })),
    );
    const moved = free ? { ...label, ...free } : label;
    placed.push(moved);
    return moved;
  });
}
