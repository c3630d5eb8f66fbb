import type { FieldMessage } from '../validation/schema-errors';

/**
 * The analysis rate field's text as the body's analysis_fps: none when empty (the engine's setting,
 * or the task's current rate, applies), else its number; `problem` when it is not a number (the
 * engine's schema checks the range).
 */
export function analysisFpsOf(text: string): { value?: number; problem?: FieldMessage } {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  const value = Number(trimmed);
  return Number.isFinite(value) ? { value } : { problem: { key: 'validation.number' } };
}
