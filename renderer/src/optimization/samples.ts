/** The sample grid's data: pages from the engine, the reason filter, and a judged sample put back. */
import { placeLabels, type SamplePage, type SampleReason, type SampleView } from '../../../engine/contract';

export const REASONS: readonly SampleReason[] = ['near_threshold', 'flicker', 'counter_toggle'];

/** Samples with a reason (all without one). The engine filters by verdict and app, not by reason. */
export function withReason(samples: readonly SampleView[], reason: SampleReason | null): SampleView[] {
  return reason === null ? [...samples] : samples.filter((sample) => sample.reasons.includes(reason));
}

/** The pages with one sample replaced by its new state (a verdict the engine stored). */
export function replaceSample<P extends Pick<SamplePage, 'items'>>(
  pages: readonly P[],
  sample: SampleView,
): P[] {
  return pages.map((page) =>
    page.items.some((item) => item.sample_id === sample.sample_id)
      ? { ...page, items: page.items.map((item) => (item.sample_id === sample.sample_id ? sample : item)) }
      : page,
  );
}

/** Detections on the frame, and the hard ones that made it a sample. */
export function detectionCounts(sample: Pick<SampleView, 'annotations'>): { all: number; hard: number } {
  return {
    all: sample.annotations.length,
    hard: sample.annotations.filter((annotation) => annotation.hard).length,
  };
}

interface Point {
  x: number;
  y: number;
}

/**
 * A box dragged over the frame as shown (`shown`: its size on screen; points relative to its corner),
 * in the frame's own pixels as the engine takes it: [x, y, w, h], corners in either order, clamped to
 * the frame and rounded. Null when smaller than 4 px a side (a click, not a box).
 */
export function boxFromDrag(
  from: Point,
  to: Point,
  shown: { width: number; height: number },
  frame: { width: number; height: number },
): [number, number, number, number] | null {
  const sx = frame.width / shown.width;
  const sy = frame.height / shown.height;
  const clampX = (v: number) => Math.min(frame.width, Math.max(0, Math.round(v * sx)));
  const clampY = (v: number) => Math.min(frame.height, Math.max(0, Math.round(v * sy)));
  const [x0, x1] = [clampX(from.x), clampX(to.x)].sort((a, b) => a - b) as [number, number];
  const [y0, y1] = [clampY(from.y), clampY(to.y)].sort((a, b) => a - b) as [number, number];
  return x1 - x0 < 4 || y1 - y0 < 4 ? null : [x0, y0, x1 - x0, y1 - y0];
}

/** A detection's tag on the sample's frame: its text and where it is written (x, baseline y). */
export interface SampleTag {
  text: string;
  x: number;
  y: number;
}

/**
 * The tags of a sample's detections ("2 · person 0.80 #7 ✓"), `size` px high, placed as the OSD
 * places its own: above the box where there is room, and moved off the tags placed before them.
 * Widths are estimated (0.62 em per character), which is what keeps neighbours apart.
 */
export function sampleTags(
  sample: Pick<SampleView, 'annotations' | 'width' | 'height'>,
  size: number,
): SampleTag[] {
  const height = Math.round(size * 1.25);
  const items = sample.annotations.map((annotation, index) => {
    const [x = 0, y = 0, w = 0, h = 0] = annotation.bbox;
    const mark = annotation.verdict === 'right' ? ' ✓' : annotation.verdict === 'wrong' ? ' ✗' : '';
    const track = annotation.track_id === null ? '' : ` #${annotation.track_id}`;
    const text = `${index + 1} · ${annotation.label} ${annotation.score.toFixed(2)}${track}${mark}`;
    const width = Math.ceil(text.length * size * 0.62);
    const label = {
      text,
      width,
      height,
      x: Math.max(0, Math.min(x, sample.width - width)),
      y: y >= height ? y - height : y,
    };
    return { label, box: { x1: x, y1: y, x2: x + w, y2: y + h } };
  });
  return placeLabels(items, sample.width, sample.height).map((label) => {
    const { text, x, y } = label as NonNullable<typeof label>;
    // The baseline sits a fifth of the tag's height above its bottom (room for descenders).
    return { text, x, y: y + height - Math.round(height / 5) };
  });
}
