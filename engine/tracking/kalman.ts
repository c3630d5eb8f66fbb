import type { Box } from '../vision/types';

/**
 * The constant-velocity Kalman filter of SORT/ByteTrack. State (8): centre x, centre y, aspect a = w/h,
 * height h, then their velocities per analysed frame. Measurement (4): cx, cy, a, h.
 */

// ByteTrack's noise, proportional to the box height so it scales with the object.
const STD_WEIGHT_POSITION = 1 / 20;
const STD_WEIGHT_VELOCITY = 1 / 160;

// Scratch for update(): the Cholesky factor L of the innovation covariance, L⁻¹·H·P, and the innovation
// (whitened in place to L⁻¹·innovation).
// One filter runs at a time (single thread), so module-level buffers save allocations per update.
const cholesky = new Float64Array(16);
const gainFactor = new Float64Array(32);
const innovation = new Float64Array(4);

const square = (x: number) => x * x;

export class KalmanBoxFilter {
  /** cx, cy, a, h, vcx, vcy, va, vh. */
  readonly mean = new Float64Array(8);
  /** 8x8, row-major, kept exactly symmetric. */
  readonly covariance = new Float64Array(64);

  constructor(box: Box) {
    const h = box.y2 - box.y1;
    this.mean[0] = (box.x1 + box.x2) / 2;
    this.mean[1] = (box.y1 + box.y2) / 2;
    this.mean[2] = (box.x2 - box.x1) / h;
    this.mean[3] = h;
    const position = 2 * STD_WEIGHT_POSITION * h;
    const velocity = 10 * STD_WEIGHT_VELOCITY * h;
    const std = [position, position, 1e-2, position, velocity, velocity, 1e-5, velocity];
    for (let i = 0; i < 8; i++) this.covariance[i * 9] = square(std[i] as number);
  }

  /**
   * Advances one frame. holdHeight zeroes the height velocity first, as ByteTrack does for lost tracks,
   * so a box coasting without evidence does not keep growing or shrinking.
   */
  predict(holdHeight = false): void {
    const m = this.mean;
    const p = this.covariance;
    if (holdHeight) m[7] = 0;
    const h = m[3] as number;
    for (let i = 0; i < 4; i++) m[i] = (m[i] as number) + (m[i + 4] as number);

    // P' = F·P·Fᵀ with F = [[I, I], [0, I]]: per 4x4 block [[A, B], [Bᵀ, C]] this is
    // [[A + B + Bᵀ + C, B + C], [Bᵀ + C, C]]. Each (i, j) touches only its own four cells, so in place is safe;
    // adding (B + Bᵀ) as one term keeps the result bit-exactly symmetric.
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 4; j++) {
        const a = p[i * 8 + j] as number;
        const b = p[i * 8 + j + 4] as number;
        const bt = p[(i + 4) * 8 + j] as number;
        const c = p[(i + 4) * 8 + j + 4] as number;
        p[i * 8 + j] = a + (b + bt) + c;
        p[i * 8 + j + 4] = b + c;
        p[(i + 4) * 8 + j] = bt + c;
      }
    }

    const position = square(STD_WEIGHT_POSITION * h);
    const velocity = square(STD_WEIGHT_VELOCITY * h);
    p[0] = (p[0] as number) + position;
    p[9] = (p[9] as number) + position;
    p[18] = (p[18] as number) + 1e-4;
    p[27] = (p[27] as number) + position;
    p[36] = (p[36] as number) + velocity;
    p[45] = (p[45] as number) + velocity;
    p[54] = (p[54] as number) + 1e-10;
    p[63] = (p[63] as number) + velocity;
  }

  /** Corrects the state with a measured box. */
  update(box: Box): void {
    const m = this.mean;
    const p = this.covariance;
    const h = m[3] as number;

    // Innovation covariance S = H·P·Hᵀ + R (the top-left 4x4 of P plus measurement noise), factored S = L·Lᵀ.
    const position = square(STD_WEIGHT_POSITION * h);
    const l = cholesky;
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j <= i; j++) {
        let sum = p[i * 8 + j] as number;
        if (i === j) sum += i === 2 ? 1e-2 : position;
        for (let k = 0; k < j; k++) sum -= (l[i * 4 + k] as number) * (l[j * 4 + k] as number);
        l[i * 4 + j] = i === j ? Math.sqrt(sum) : sum / (l[j * 4 + j] as number);
      }
    }

    // With Y = L⁻¹·H·P and z = L⁻¹·innovation: gain·innovation = Yᵀ·z and K·S·Kᵀ = Yᵀ·Y,
    // so no inverse is formed and the covariance update below is symmetric by construction.
    const z = innovation;
    const measuredH = box.y2 - box.y1;
    z[0] = (box.x1 + box.x2) / 2 - (m[0] as number);
    z[1] = (box.y1 + box.y2) / 2 - (m[1] as number);
    z[2] = (box.x2 - box.x1) / measuredH - (m[2] as number);
    z[3] = measuredH - h;
    const y = gainFactor;
    for (let i = 0; i < 4; i++) {
      const diagonal = l[i * 5] as number;
      for (let col = 0; col < 8; col++) {
        let sum = p[i * 8 + col] as number;
        for (let k = 0; k < i; k++) sum -= (l[i * 4 + k] as number) * (y[k * 8 + col] as number);
        y[i * 8 + col] = sum / diagonal;
      }
      // Forward substitution in place: z[k] for k < i is already whitened.
      let zi = z[i] as number;
      for (let k = 0; k < i; k++) zi -= (l[i * 4 + k] as number) * (z[k] as number);
      z[i] = zi / diagonal;
    }

    for (let col = 0; col < 8; col++) {
      let correction = 0;
      for (let k = 0; k < 4; k++) correction += (y[k * 8 + col] as number) * (z[k] as number);
      m[col] = (m[col] as number) + correction;
    }
    for (let r = 0; r < 8; r++) {
      for (let c = r; c < 8; c++) {
        let reduction = 0;
        for (let k = 0; k < 4; k++) reduction += (y[k * 8 + r] as number) * (y[k * 8 + c] as number);
        const value = (p[r * 8 + c] as number) - reduction;
        p[r * 8 + c] = value;
        p[c * 8 + r] = value;
      }
    }
  }

  /** Writes the current estimate as a box into out (reused by callers on the hot path) and returns it. */
  toBox(out: Box = { x1: 0, y1: 0, x2: 0, y2: 0 }): Box {
    const h = this.mean[3] as number;
    const w = (this.mean[2] as number) * h;
    const cx = this.mean[0] as number;
    const cy = this.mean[1] as number;
    out.x1 = cx - w / 2;
    out.y1 = cy - h / 2;
    out.x2 = cx + w / 2;
    out.y2 = cy + h / 2;
    return out;
  }
}
