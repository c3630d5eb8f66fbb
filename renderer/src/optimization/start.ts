/** The start form of a run (4.13 body), checked with the engine's OptimizationBody schema. */
import type { Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { OptimizationBody } from '../../../engine/contract';
import { type FieldErrors, schemaErrors } from '../validation/schema-errors';

export interface StartForm {
  appIds: string[];
  /** As typed. */
  duration: string;
  maxSamples: string;
}

export const DEFAULT_DURATION_S = 60;
export const DEFAULT_MAX_SAMPLES = 500;

/** A typed number as the engine gets it; text that is no number stays text, so the schema names it. */
function numberOf(text: string): number | string {
  const trimmed = text.trim();
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
}

export function startBody(form: StartForm): Record<string, unknown> {
  const body: Record<string, unknown> = { app_ids: form.appIds };
  if (form.duration.trim() !== '') body.duration = numberOf(form.duration);
  if (form.maxSamples.trim() !== '') body.max_samples = numberOf(form.maxSamples);
  return body;
}

/** Problems by field (app_ids, duration, max_samples); empty when the engine would take the body. */
export function startErrors(form: StartForm): FieldErrors {
  const errors = schemaErrors(OptimizationBody, startBody(form));
  if (form.appIds.length === 0) errors.app_ids = { key: 'optimization.chooseApps' };
  return errors;
}

/** The body to send, or null while the form has a problem. */
export function startRequest(form: StartForm): Static<typeof OptimizationBody> | null {
  const body = startBody(form);
  return form.appIds.length > 0 && Value.Check(OptimizationBody, body) ? body : null;
}
