/**
 * A model's outputs as the decoders read them: every output by name, its values as numbers whatever
 * onnxruntime's element type (int64 labels of D-FINE, float scores), and picking one by role.
 */

export interface OutputTensor {
  name: string;
  /** Values in row-major order. */
  data: ArrayLike<number>;
  dims: readonly number[];
}

export const shapeText = (dims: readonly number[]) => `[${dims.join(',')}]`;

/**
 * The output that plays a role: the one whose name contains one of `names` (exports name them
 * boxes, scores, labels...), else the one at `position` in the model's output order.
 */
export function outputFor(
  outputs: readonly OutputTensor[],
  role: string,
  names: readonly string[],
  position: number,
): OutputTensor {
  const byName = outputs.find((output) => names.some((name) => output.name.toLowerCase().includes(name)));
  const chosen = byName ?? outputs[position];
  if (!chosen) {
    throw new Error(
      `the model has ${outputs.length} output(s) (${outputs.map((o) => o.name).join(', ')}); none holds the ${role}`,
    );
  }
  return chosen;
}

/** [N, K] of a [1, N, K] tensor (K = 1 also as [1, N]), or a thrown error naming what was expected. */
export function rows(output: OutputTensor, columns: number, role: string): number {
  const { dims } = output;
  const [batch, n, k = 1] = dims;
  const fits = (dims.length === 3 || (dims.length === 2 && columns === 1)) && batch === 1 && k === columns;
  if (!fits || n === undefined) {
    const expected = columns === 1 ? '[1, N]' : `[1, N, ${columns}]`;
    throw new Error(`the ${role} output "${output.name}" must be ${expected}; got ${shapeText(dims)}`);
  }
  return n;
}
