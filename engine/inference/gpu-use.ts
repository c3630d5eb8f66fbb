import type { PackageRegistry } from '../packages/registry';
import { isOnnxFamily } from './families';
import type { InferencePool, ModelFigures } from './pool';

/**
 * Whether this engine runs models on a GPU: some model's session opened on a GPU provider, as its
 * inference host reported it (providers.ts), never guessed from the platform or the setting. A
 * cluster node says so on its card, and cameras whose task requires a GPU go only to such nodes.
 */
export function gpuInUse(models: readonly ModelFigures[]): boolean {
  return models.some((model) => model.placement !== null && model.placement.provider !== 'cpu');
}

/** The side of the probe's blank frame: letterboxed to the model's input like any frame. */
const PROBE_SIDE = 64;

/**
 * Opens the first installed ONNX detector's session on the engine's provider with one blank frame,
 * so that a cluster node knows whether it has a GPU before any camera runs on it: a node that said it
 * had none would never be given a camera that requires one, and so never open a session on its GPU.
 * Returns whether a GPU took it; false too when no ONNX detector is installed (then the first camera's
 * model answers it).
 */
export async function probeGpu(
  pool: InferencePool,
  packages: Pick<PackageRegistry, 'list' | 'app'>,
): Promise<boolean> {
  const models = packages
    .list()
    .flatMap((pkg) => Object.keys(pkg.apps).map((appId) => packages.app(pkg.zapk_id, appId).model));
  const model = models.find((candidate) => isOnnxFamily(candidate.spec.family) && candidate.file !== null);
  if (!model?.file) return false;
  const { key, name, classes, spec, file } = model;
  const data = new Uint8Array(PROBE_SIDE * PROBE_SIDE * 3);
  await pool.detect({ key, name, classes, spec, file }, { width: PROBE_SIDE, height: PROBE_SIDE, data });
  return gpuInUse(pool.models());
}
