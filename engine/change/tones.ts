// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/**
 * Maps `source`'s tones in place onto `target`'s (one channel of two registered images). Exposure,
 * white balance and gamma are global monotone changes, so the mapping is the non-decreasing curve
 * through the joint histogram of the two that most pixels lie near: a changed area disagrees with
 * it and is outvoted. Matching the histograms instead (histogram specification) lets a change move
 * the mapping of every level: an object pasted in brings its own levels into one histogram and
 * shifts all the others, and flat areas far from it (a sky) then differ. Even a median per level
 * fails where an object covers most pixels of a few levels (a patch over the sky): the curve must
 * stay monotone, which the sky's other levels decide.
 */
export function matchTones(source: Float32Array, target: Float32Array, valid: Uint8Array): void {
  const joint = new Uint32Array(256 * 256);
  for (let i = 0; i < source.length; i++) {
    if (valid[i] === 0) continue;
    const at = level(source[i] as number) * 256 + level(target[i] as number);
    joint[at] = (joint[at] as number) + 1;
  }
  const { values, weights } = supportedPath(joint);
  const lut = monotone(values, weights);
  for (let i = 0; i < source.length; i++) {
    if (valid[i] === 0) continue;
    const value = Math.min(255, Math.max(0, source[i] as number));
    const low = Math.floor(value);
    const high = Math.min(255, low + 1);
    const fraction = value - low;
    source[i] = (lut[low] as number) * (1 - fraction) + (lut[high] as number) * fraction;
  }
}

/** Target levels within this distance of the curve support it (JPEG and sensor noise). */
const BAND = 4;

/**
 * The non-decreasing path t(s) through the joint histogram with the most pixels within BAND of it
 * (dynamic programming over the source levels that occur), then for each level the mean target of
 * the pixels in its band (a fraction of a level) and their count.
 */
function supportedPath(joint: Uint32Array): { values: Float64Array; weights: Float64Array } {
  const levels: number[] = [];
  const band = new Float64Array(256 * 256);
  for (let s = 0; s < 256; s++) {
    const row = s * 256;
    let total = 0;
    let window = 0;
    for (let t = 0; t < BAND && t < 256; t++) window += joint[row + t] as number;
    for (let t = 0; t < 256; t++) {
      if (t + BAND < 256) window += joint[row + t + BAND] as number;
      if (t - BAND - 1 >= 0) window -= joint[row + t - BAND - 1] as number;
      band[row + t] = window;
      total += joint[row + t] as number;
    }
    if (total > 0) levels.push(s);
  }
  const from = new Uint8Array(levels.length * 256);
  let score = new Float64Array(256);
  for (let k = 0; k < levels.length; k++) {
    const row = (levels[k] as number) * 256;
    const next = new Float64Array(256);
    let bestBefore = -1;
    let bestAt = 0;
    for (let t = 0; t < 256; t++) {
      if ((score[t] as number) > bestBefore) {
        bestBefore = score[t] as number;
        bestAt = t;
      }
      next[t] = (band[row + t] as number) + bestBefore;
      from[k * 256 + t] = bestAt;
    }
    score = next;
  }
  const values = new Float64Array(256);
  const weights = new Float64Array(256);
  let t = score.indexOf(Math.max(...score));
  for (let k = levels.length - 1; k >= 0; k--) {
    const s = levels[k] as number;
    let sum = 0;
    let count = 0;
    for (let u = Math.max(0, t - BAND); u <= Math.min(255, t + BAND); u++) {
      const c = joint[s * 256 + u] as number;
      sum += u * c;
      count += c;
    }
    values[s] = count > 0 ? sum / count : t;
    weights[s] = count;
    t = from[k * 256 + t] as number;
  }
  return { values, weights };
}

const level = (v: number) => Math.min(255, Math.max(0, Math.round(v)));

/**
 * The non-decreasing curve closest to the path's values (the band means may cross by a fraction),
 * each weighted by its count (pool adjacent violators); levels without support are interpolated
 * between their neighbours, and held flat beyond the ends.
 */
function monotone(values: Float64Array, weights: Float64Array): Float64Array {
  const blocks: Array<{ value: number; weight: number; from: number; to: number }> = [];
  for (let s = 0; s < 256; s++) {
    const weight = weights[s] as number;
    if (weight === 0) continue;
    blocks.push({ value: values[s] as number, weight, from: s, to: s });
    while (blocks.length > 1) {
      const last = blocks.at(-1) as (typeof blocks)[number];
      const before = blocks.at(-2) as (typeof blocks)[number];
      if (before.value <= last.value) break;
      const weight = before.weight + last.weight;
      blocks.splice(-2, 2, {
        value: (before.value * before.weight + last.value * last.weight) / weight,
        weight,
        from: before.from,
        to: last.to,
      });
    }
  }
  const lut = new Float64Array(256);
  if (blocks.length === 0) {
    for (let s = 0; s < 256; s++) lut[s] = s;
    return lut;
  }
  // Each block's value at the middle of its levels, straight lines between the middles.
  const knots = blocks.map((b) => ({ at: (b.from + b.to) / 2, value: b.value }));
  let k = 0;
  for (let s = 0; s < 256; s++) {
    while (k < knots.length - 1 && (knots[k + 1] as (typeof knots)[number]).at <= s) k++;
    const a = knots[k] as (typeof knots)[number];
    const b = knots[k + 1];
    if (s <= a.at || !b) lut[s] = a.value;
    else lut[s] = a.value + ((b.value - a.value) * (s - a.at)) / (b.at - a.at);
  }
  return lut;
}
