import type { ModelInput, ModelSpec } from '../packages/manifest';
import { type OutputTensor, shapeText } from './outputs';

// Typed-array reads below are in bounds by construction; `as number` only answers noUncheckedIndexedAccess.

/**
 * A change model's first output read as the probability that each pixel of its input changed, 0..1
 * (row-major, input.width * input.height). Layouts: [1,1,H,W] (the probability, or a logit through
 * a sigmoid) and [1,2,H,W] (two classes, channel 1 "changed": as given, or logits through a softmax),
 * H and W the input's. Throws for any other layout, which is how an install check refuses one.
 */
export function changeProbabilities(
  outputs: readonly OutputTensor[],
  input: ModelInput,
  kind: ModelSpec['change_output'] = 'probabilities',
): Float32Array {
  const [output] = outputs;
  if (!output) throw new Error('outputs nothing');
  const { dims, data } = output;
  const { width, height } = input;
  const channels = dims[1];
  if (
    dims.length !== 4 ||
    dims[0] !== 1 ||
    (channels !== 1 && channels !== 2) ||
    dims[2] !== height ||
    dims[3] !== width
  ) {
    throw new Error(
      `outputs ${shapeText(dims)}; a change model outputs [1,1,${height},${width}] or [1,2,${height},${width}]`,
    );
  }
  const n = width * height;
  const out = new Float32Array(n);
  const logits = kind === 'logits';
  for (let i = 0; i < n; i++) {
    const changed = data[(channels - 1) * n + i] as number;
    if (!logits) out[i] = changed;
    // Two-class softmax: e^b / (e^a + e^b) is the sigmoid of b - a.
    else out[i] = 1 / (1 + Math.exp((channels === 2 ? (data[i] as number) : 0) - changed));
  }
  return out;
}

/** Probabilities as bytes (0..255), the way a change map crosses the hosts' JSON channel. */
export function quantise(probabilities: Float32Array): Uint8Array {
  const out = new Uint8Array(probabilities.length);
  for (let i = 0; i < out.length; i++)
    out[i] = Math.round(Math.min(1, Math.max(0, probabilities[i] as number)) * 255);
  return out;
}
