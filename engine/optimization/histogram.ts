/**
 * Scores counted in bins of 0.001, stored sparsely (bin -> count) so that a run's statistics stay
 * small in the database whatever its length.
 */
export type Histogram = Record<string, number>;

const BINS = 1000;

/** The bin of a score; the epsilon keeps 0.29 in bin 290 despite binary fractions. */
export const binOf = (score: number) => Math.min(BINS, Math.max(0, Math.floor(score * BINS + 1e-6)));

/** The lowest bin a score must reach to be at least the threshold. */
const thresholdBin = (threshold: number) => Math.min(BINS, Math.max(0, Math.ceil(threshold * BINS - 1e-6)));

export function addScore(histogram: Histogram, score: number, weight = 1): void {
  const bin = String(binOf(score));
  histogram[bin] = (histogram[bin] ?? 0) + weight;
}

export function merge(into: Histogram, from: Histogram): void {
  for (const [bin, count] of Object.entries(from)) into[bin] = (into[bin] ?? 0) + count;
}

export const total = (histogram: Histogram) => Object.values(histogram).reduce((sum, n) => sum + n, 0);

/** Weight of the scores at or above the threshold. */
export function atLeast(histogram: Histogram, threshold: number): number {
  const from = thresholdBin(threshold);
  let sum = 0;
  for (const [bin, count] of Object.entries(histogram)) if (Number(bin) >= from) sum += count;
  return sum;
}

/** The lower median score (as its bin's start), or 0 for an empty histogram. */
export function median(histogram: Histogram): number {
  const bins = Object.entries(histogram)
    .map(([bin, count]) => [Number(bin), count] as const)
    .sort((a, b) => a[0] - b[0]);
  const half = total(histogram) / 2;
  let seen = 0;
  for (const [bin, count] of bins) {
    seen += count;
    if (seen >= half) return bin / BINS;
  }
  return 0;
}
