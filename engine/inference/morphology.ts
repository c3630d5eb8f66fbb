// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/**
 * Binary erosion or dilation with a square of the given radius, as a row pass then a column pass;
 * the window is clipped at the border so objects touching the edge are not eaten away.
 */
export function morph(
  source: Uint8Array,
  target: Uint8Array,
  scratch: Uint8Array,
  cols: number,
  rows: number,
  radius: number,
  op: 'erode' | 'dilate',
): void {
  // Erosion keeps a pixel only if the whole window is set; dilation sets it if any pixel is.
  const wanted = op === 'erode' ? 0 : 1;
  const miss = 1 - wanted;
  for (let y = 0; y < rows; y++) {
    const base = y * cols;
    for (let x = 0; x < cols; x++) {
      const from = Math.max(0, x - radius);
      const to = Math.min(cols - 1, x + radius);
      let value = miss;
      for (let k = from; k <= to; k++) {
        if (source[base + k] === wanted) {
          value = wanted;
          break;
        }
      }
      scratch[base + x] = value;
    }
  }
  for (let y = 0; y < rows; y++) {
    const from = Math.max(0, y - radius);
    const to = Math.min(rows - 1, y + radius);
    for (let x = 0; x < cols; x++) {
      let value = miss;
      for (let k = from; k <= to; k++) {
        if (scratch[k * cols + x] === wanted) {
          value = wanted;
          break;
        }
      }
      target[y * cols + x] = value;
    }
  }
}

/**
 * Opening (radius 1) drops speckle, then closing joins the fragments of one object. The result is in
 * `mask`; `spare` and `scratch` are work buffers of the same size.
 */
export function openClose(
  foreground: Uint8Array,
  mask: Uint8Array,
  spare: Uint8Array,
  scratch: Uint8Array,
  cols: number,
  rows: number,
  closeRadius: number,
): void {
  morph(foreground, spare, scratch, cols, rows, 1, 'erode');
  // Nothing survives the erosion (a still frame, or speckle only): the other passes would only copy
  // zeros, and a still camera runs this on every frame it looks at.
  if (spare.indexOf(1) === -1) {
    mask.fill(0);
    return;
  }
  morph(spare, mask, scratch, cols, rows, 1, 'dilate');
  morph(mask, spare, scratch, cols, rows, closeRadius, 'dilate');
  morph(spare, mask, scratch, cols, rows, closeRadius, 'erode');
}
