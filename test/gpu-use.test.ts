import { afterEach, describe, expect, it } from 'vitest';
import { gpuInUse, probeGpu } from '../engine/inference/gpu-use';
import { InferencePool, type ModelFigures } from '../engine/inference/pool';
import type { PackageRegistry } from '../engine/packages/registry';
import { FIXTURE_MODEL } from './helpers/example-package';

/**
 * Whether an engine runs models on a GPU, as a cluster node's card says it: from the provider its
 * sessions opened on, and a probe session at join so that it is known before any camera runs. This
 * machine has no GPU: the probe's real session opens on the CPU, and the answer is false.
 */

const figures = (provider: ModelFigures['placement']): ModelFigures => ({
  name: 'p/m',
  placement: provider,
  inferenceMs: null,
  queued: 0,
});

describe('gpuInUse', () => {
  it('is true only when some model runs on a GPU provider', () => {
    expect(gpuInUse([])).toBe(false);
    expect(gpuInUse([figures(null)])).toBe(false);
    expect(gpuInUse([figures({ provider: 'cpu', fallback: 'cuda unavailable: no library' })])).toBe(false);
    for (const provider of ['cuda', 'tensorrt', 'directml', 'coreml'] as const)
      expect(gpuInUse([figures(null), figures({ provider, fallback: null })]), provider).toBe(true);
  });
});

describe('probeGpu', () => {
  let pool: InferencePool | undefined;
  afterEach(async () => pool?.close());

  /** Installed packages as the registry lists them: the built-in motion app, and `onnx` when given. */
  const packages = (onnx: boolean): Pick<PackageRegistry, 'list' | 'app'> =>
    ({
      list: () => [
        { zapk_id: 'builtin', apps: { motion: {} } },
        ...(onnx ? [{ zapk_id: 'coco', apps: { person: {} } }] : []),
      ],
      app: (zapkId: string) => ({
        model:
          zapkId === 'coco'
            ? { ...FIXTURE_MODEL, name: 'coco/yolox-nano' }
            : { key: 'motion', name: 'builtin/motion', spec: { family: 'motion' }, file: null },
      }),
    }) as unknown as Pick<PackageRegistry, 'list' | 'app'>;

  it("opens the first ONNX detector's session on the engine's provider: here the CPU, so no GPU", async () => {
    pool = new InferencePool({ workers: 1 });
    expect(await probeGpu(pool, packages(true))).toBe(false);
    expect(pool.models().map((model) => [model.name, model.placement?.provider])).toEqual([
      ['coco/yolox-nano', 'cpu'],
    ]);
  }, 60_000);

  it('with no ONNX detector installed it opens nothing: the first camera tells', async () => {
    pool = new InferencePool({ workers: 1 });
    expect(await probeGpu(pool, packages(false))).toBe(false);
    expect(pool.models()).toEqual([]);
  });
});
