/** Why an optimization request was refused; engine/api/domain-errors.ts maps each to its envelope code. */
export type OptimizationErrorKind =
  | 'optimization.not_found'
  | 'optimization.sample_not_found'
  | 'optimization.running'
  | 'optimization.invalid_judgement';
