export interface Assignment {
  /** [row, col] pairs in ascending row order. */
  readonly matches: ReadonlyArray<readonly [row: number, col: number]>;
  readonly unmatchedRows: readonly number[];
  readonly unmatchedCols: readonly number[];
}

/**
 * Minimum-cost assignment on a row-major rows x cols cost matrix with a cost limit, with the semantics of
 * lap.lapjv(cost, extend_cost=True, cost_limit) that ByteTrack uses: leaving one row and one column
 * unmatched together costs `threshold`. So a pair costing more than `threshold` never matches, and one cheap
 * pair can win over two dearer ones. Infinite or NaN costs mark forbidden pairs; the threshold must be finite.
 *
 * Clamping every cost to `threshold` turns that into a plain rectangular assignment with the same optimum
 * (a clamped pair costs what leaving both sides unmatched would), which the shortest augmenting path
 * Hungarian method (Jonker-Volgenant style, O(n²·m) for n = min(rows, cols)) solves without padding the
 * matrix to (rows + cols)². Clamped pairs are dropped from the result afterwards.
 */
export function assign(cost: Float64Array, rows: number, cols: number, threshold: number): Assignment {
  if (!Number.isFinite(threshold))
    throw new RangeError(`assignment threshold must be finite, got ${threshold}`);
  const rowToCol = new Int32Array(rows).fill(-1);
  const transposed = rows > cols;
  const n = transposed ? cols : rows;
  const m = transposed ? rows : cols;
  const at = (i: number, j: number) => (transposed ? j * cols + i : i * cols + j);

  if (n > 0) {
    // Clamped a hair above the threshold so that a pair exactly at it beats leaving both sides unmatched.
    const ceiling = threshold + 1e-9 * Math.max(1, Math.abs(threshold));
    // The solver wants n <= m; a holds the clamped costs in that orientation.
    const a = new Float64Array(n * m);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < m; j++) {
        const c = cost[at(i, j)] as number;
        a[i * m + j] = c <= threshold ? c : ceiling;
      }
    }
    const columnOwner = solve(a, n, m);
    for (let j = 0; j < m; j++) {
      const i = columnOwner[j] as number;
      if (i < 0 || !((cost[at(i, j)] as number) <= threshold)) continue;
      if (transposed) rowToCol[j] = i;
      else rowToCol[i] = j;
    }
  }

  const matches: [number, number][] = [];
  const unmatchedRows: number[] = [];
  const colMatched = new Uint8Array(cols);
  for (let r = 0; r < rows; r++) {
    const c = rowToCol[r] as number;
    if (c < 0) unmatchedRows.push(r);
    else {
      matches.push([r, c]);
      colMatched[c] = 1;
    }
  }
  const unmatchedCols: number[] = [];
  for (let c = 0; c < cols; c++) if (colMatched[c] === 0) unmatchedCols.push(c);
  return { matches, unmatchedRows, unmatchedCols };
}

/**
 * Hungarian method with potentials on a finite n x m matrix (n <= m), rows added one at a time along a
 * shortest augmenting path. Returns, per column, the row assigned to it or -1.
 */
function solve(a: Float64Array, n: number, m: number): Int32Array {
  // 1-based, index 0 is the virtual start column of each augmenting search.
  const rowPotential = new Float64Array(n + 1);
  const colPotential = new Float64Array(m + 1);
  const owner = new Int32Array(m + 1); // row (1-based) assigned to column j, 0 = free
  const previous = new Int32Array(m + 1); // the column before j on the current shortest path
  const slack = new Float64Array(m + 1);
  const visited = new Uint8Array(m + 1);

  for (let row = 1; row <= n; row++) {
    owner[0] = row;
    let current = 0;
    slack.fill(Number.POSITIVE_INFINITY);
    visited.fill(0);
    do {
      visited[current] = 1;
      const i = owner[current] as number;
      const base = (i - 1) * m - 1;
      const ui = rowPotential[i] as number;
      let delta = Number.POSITIVE_INFINITY;
      let next = 0;
      for (let j = 1; j <= m; j++) {
        if (visited[j] === 1) continue;
        const reduced = (a[base + j] as number) - ui - (colPotential[j] as number);
        if (reduced < (slack[j] as number)) {
          slack[j] = reduced;
          previous[j] = current;
        }
        if ((slack[j] as number) < delta) {
          delta = slack[j] as number;
          next = j;
        }
      }
      for (let j = 0; j <= m; j++) {
        if (visited[j] === 1) {
          const r = owner[j] as number;
          rowPotential[r] = (rowPotential[r] as number) + delta;
          colPotential[j] = (colPotential[j] as number) - delta;
        } else slack[j] = (slack[j] as number) - delta;
      }
      current = next;
    } while (owner[current] !== 0);
    // Flip the path: every column on it takes the row of the column before it.
    do {
      const before = previous[current] as number;
      owner[current] = owner[before] as number;
      current = before;
    } while (current !== 0);
  }

  const result = new Int32Array(m);
  for (let j = 1; j <= m; j++) result[j - 1] = (owner[j] as number) - 1;
  return result;
}
