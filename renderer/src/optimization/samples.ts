/** The sample grid's data: pages from the engine, the reason filter, and a judged sample put back. */
import type { SamplePage, SampleReason, SampleView } from '../../../engine/contract';

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
