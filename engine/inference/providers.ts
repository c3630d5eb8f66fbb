/**
 * Where onnxruntime runs a model. The engine setting names a provider (or auto); each session tries
 * the providers that setting stands for in order and falls back to the CPU, which every build has,
 * saying why. onnxruntime-node ships DirectML (Windows x64) and CoreML (macOS) in its package; CUDA
 * and TensorRT are libraries added to an install (docs/gpu.md). Kept free of onnxruntime's import
 * so that the engine can validate the setting without loading it.
 */

export const EXECUTION_PROVIDERS = ['auto', 'cpu', 'cuda', 'tensorrt', 'directml', 'coreml'] as const;
export type ExecutionProviderSetting = (typeof EXECUTION_PROVIDERS)[number];
/** A provider as the engine's figures name it. */
export type ExecutionProvider = Exclude<ExecutionProviderSetting, 'auto'>;

export function isExecutionProviderSetting(value: unknown): value is ExecutionProviderSetting {
  return (EXECUTION_PROVIDERS as readonly unknown[]).includes(value);
}

/** onnxruntime-node's name of each provider. */
export const ORT_NAME: Record<ExecutionProvider, string> = {
  cpu: 'cpu',
  cuda: 'cuda',
  tensorrt: 'tensorrt',
  directml: 'dml',
  coreml: 'coreml',
};

/**
 * The providers to try, best first, ending with the CPU. auto is the GPU path of the platform that
 * is there: DirectML and CoreML ship with onnxruntime-node, CUDA only once its libraries are added.
 */
export function providerCandidates(
  setting: ExecutionProviderSetting,
  platform: NodeJS.Platform,
  arch: string,
  /** Whether the CUDA provider's libraries are installed (they are not part of the npm package). */
  cudaInstalled: boolean,
): ExecutionProvider[] {
  const chain: Record<ExecutionProviderSetting, ExecutionProvider[]> = {
    auto:
      platform === 'win32' && arch === 'x64'
        ? ['directml']
        : platform === 'darwin'
          ? ['coreml']
          : platform === 'linux' && arch === 'x64' && cudaInstalled
            ? ['cuda']
            : [],
    cpu: [],
    cuda: ['cuda'],
    // TensorRT builds its engines from CUDA; where TensorRT is missing, CUDA alone still beats the CPU.
    tensorrt: ['tensorrt', 'cuda'],
    directml: ['directml'],
    coreml: ['coreml'],
  };
  return [...chain[setting], 'cpu'];
}

/** A session and where it runs; `fallback` says why it does not run where the setting asked. */
export interface Placed<Session> {
  session: Session;
  provider: ExecutionProvider;
  fallback: string | null;
}

/**
 * Opens a session on the first provider that takes it. `create` is onnxruntime's
 * InferenceSession.create bound to the model and its other options; a provider that is missing
 * fails there ("Failed to load shared library", "backend not found"), and the next is tried.
 */
export async function openOnProvider<Session>(
  candidates: readonly ExecutionProvider[],
  create: (ortName: string) => Promise<Session>,
): Promise<Placed<Session>> {
  const refusals: string[] = [];
  for (const provider of candidates) {
    try {
      const session = await create(ORT_NAME[provider]);
      return { session, provider, fallback: refusals.length > 0 ? refusals.join('; ') : null };
    } catch (error) {
      // The CPU refusing is the model's own fault (a broken file, an unknown operator): say that.
      if (provider === 'cpu') throw error;
      refusals.push(`${provider} unavailable: ${firstLine((error as Error).message)}`);
    }
  }
  throw new Error(`no execution provider could open the model (${refusals.join('; ')})`);
}

const firstLine = (text: string) => (text.split('\n')[0] ?? '').slice(0, 200);
