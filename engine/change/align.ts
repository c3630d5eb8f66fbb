// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/** reference(x + dx, y + dy) matches current(x, y); in pixels of the grid the images were given on. */
export interface Shift {
  dx: number;
  dy: number;
}

interface Level {
  data: Float32Array;
  cols: number;
  rows: number;
}

/** The coarsest pyramid level is at least this wide, and its search radius at most this... */
const MIN_LEVEL_COLS = 64;
const MAX_LEVEL_RADIUS = 4;

/**
 * Global registration by translation, for a camera that moved a little between two shots. Edge maps
 * (|gx| + |gy|) make it indifferent to a brightness offset, and zero-mean normalised cross-correlation
 * over the overlap to a gain, so an exposure change does not pull the match. Coarse to fine: an
 * exhaustive search on a small pyramid level, refined by +-1 on each finer one; a parabola through
 * the neighbours of the best integer shift gives the sub-pixel part.
 */
export function estimateShift(
  current: Float32Array,
  reference: Float32Array,
  cols: number,
  rows: number,
  maxShift: number,
): Shift {
  let a: Level = { data: edges(current, cols, rows), cols, rows };
  let b: Level = { data: edges(reference, cols, rows), cols, rows };
  const pyramid: Array<[Level, Level]> = [[a, b]];
  let radius = maxShift;
  while (a.cols >= 2 * MIN_LEVEL_COLS && radius > MAX_LEVEL_RADIUS) {
    a = halve(a);
    b = halve(b);
    pyramid.push([a, b]);
    radius /= 2;
  }
  const top = Math.ceil(radius);
  let best = search(...(pyramid.at(-1) as [Level, Level]), 0, 0, top);
  for (let level = pyramid.length - 2; level >= 0; level--) {
    best = search(...(pyramid[level] as [Level, Level]), best.dx * 2, best.dy * 2, 1);
  }
  const [fineA, fineB] = pyramid[0] as [Level, Level];
  const at = (dx: number, dy: number) => ncc(fineA, fineB, dx, dy);
  const centre = at(best.dx, best.dy);
  return {
    dx: best.dx + vertex(at(best.dx - 1, best.dy), centre, at(best.dx + 1, best.dy)),
    dy: best.dy + vertex(at(best.dx, best.dy - 1), centre, at(best.dx, best.dy + 1)),
  };
}

/** Sub-pixel offset of the peak of a parabola through three samples one pixel apart, within +-0.5. */
function vertex(left: number, centre: number, right: number): number {
  const curvature = left - 2 * centre + right;
  if (curvature >= 0) return 0;
  return Math.max(-0.5, Math.min(0.5, (left - right) / (2 * curvature)));
}

/** The integer shift within +-radius of (cx, cy) with the highest correlation; ties keep the earlier. */
function search(a: Level, b: Level, cx: number, cy: number, radius: number): Shift {
  let best = { dx: cx, dy: cy };
  let bestScore = ncc(a, b, cx, cy);
  for (let dy = cy - radius; dy <= cy + radius; dy++) {
    for (let dx = cx - radius; dx <= cx + radius; dx++) {
      const score = ncc(a, b, dx, dy);
      if (score > bestScore) {
        bestScore = score;
        best = { dx, dy };
      }
    }
  }
  return best;
}

/** Zero-mean normalised cross-correlation of a(x, y) and b(x + dx, y + dy) over their overlap. */
function ncc(a: Level, b: Level, dx: number, dy: number): number {
  const { cols, rows } = a;
  const x0 = Math.max(0, -dx);
  const x1 = Math.min(cols, cols - dx);
  const y0 = Math.max(0, -dy);
  const y1 = Math.min(rows, rows - dy);
  if (x1 - x0 < 2 || y1 - y0 < 2) return -1;
  let sa = 0;
  let sb = 0;
  let saa = 0;
  let sbb = 0;
  let sab = 0;
  for (let y = y0; y < y1; y++) {
    let i = y * cols + x0;
    let j = (y + dy) * cols + x0 + dx;
    for (let x = x0; x < x1; x++, i++, j++) {
      const va = a.data[i] as number;
      const vb = b.data[j] as number;
      sa += va;
      sb += vb;
      saa += va * va;
      sbb += vb * vb;
      sab += va * vb;
    }
  }
  const n = (x1 - x0) * (y1 - y0);
  const varA = saa - (sa * sa) / n;
  const varB = sbb - (sb * sb) / n;
  // A featureless overlap says nothing about the shift.
  if (varA <= 1e-6 || varB <= 1e-6) return 0;
  return (sab - (sa * sb) / n) / Math.sqrt(varA * varB);
}

/** |central difference| in x plus in y; 0 on the border. */
function edges(image: Float32Array, cols: number, rows: number): Float32Array {
  const out = new Float32Array(cols * rows);
  for (let y = 1; y < rows - 1; y++) {
    for (let x = 1; x < cols - 1; x++) {
      const i = y * cols + x;
      out[i] =
        Math.abs((image[i + 1] as number) - (image[i - 1] as number)) +
        Math.abs((image[i + cols] as number) - (image[i - cols] as number));
    }
  }
  return out;
}

/** 2 x 2 area average; an odd last column or row is left out. */
function halve(level: Level): Level {
  const cols = level.cols >> 1;
  const rows = level.rows >> 1;
  const data = new Float32Array(cols * rows);
  const src = level.data;
  const w = level.cols;
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < cols; x++) {
      const i = 2 * y * w + 2 * x;
      data[y * cols + x] =
        ((src[i] as number) + (src[i + 1] as number) + (src[i + w] as number) + (src[i + w + 1] as number)) /
        4;
    }
  }
  return { data, cols, rows };
}
