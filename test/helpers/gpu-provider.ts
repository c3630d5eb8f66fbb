import { InferencePool, type ModelFigures } from '../../engine/inference/pool';

/**
 * Preloaded (--import) into an engine process to stand in for a GPU, which this machine has not: the
 * inference pool reports, beside its real models, one whose session opened on CUDA, as an inference
 * host that opened one reports it. Everything the engine does with that report (the node's card says
 * gpu, placement sends cameras that require a GPU there) is the real code.
 */
const ON_CUDA: ModelFigures = {
  name: 'stand-in/gpu',
  placement: { provider: 'cuda', fallback: null },
  inferenceMs: null,
  queued: 0,
};

const models = InferencePool.prototype.models;
InferencePool.prototype.models = function (this: InferencePool): ModelFigures[] {
  return [...models.call(this), ON_CUDA];
};
