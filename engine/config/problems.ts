/**
 * A setting's problem in an operator's words: which setting, what it must be and what it was
 * (`--analysis-fps must be 0.1..60, not 500`), from the schema that refused it. Pure.
 */
import type { TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType } from '@sinclair/typebox/value';

/** A refused setting; `field` is its path in the configuration, e.g. "analysis_fps", "cluster.servers[0]". */
export class ConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** What a value of the schema looks like, for messages and docs/configuration.md. */
export function expectation(schema: TSchema): string {
  if (typeof schema.title === 'string') return schema.title;
  if (Array.isArray(schema.anyOf)) return `one of ${schema.anyOf.map((s: TSchema) => s.const).join(', ')}`;
  const { minimum, maximum } = schema as { minimum?: number; maximum?: number };
  const whole = schema.type === 'integer' ? 'a whole number ' : '';
  if (schema.type === 'integer' || schema.type === 'number') {
    if (minimum !== undefined && maximum !== undefined) return `${whole}${minimum}..${maximum}`;
    if (minimum !== undefined) return `${whole || 'a number '}of at least ${minimum}`;
    return whole.trim() || 'a number';
  }
  if (schema.type === 'array') {
    const items = expectation(schema.items as TSchema);
    return schema.minItems ? `a list of at least ${schema.minItems}, each ${items}` : `a list, each ${items}`;
  }
  if (schema.type === 'string') return schema.minLength ? 'a non-empty text' : 'a text';
  if (schema.type === 'object') return 'an object';
  return 'valid';
}

/** "cluster.servers[0]" from the path parts ["cluster", "servers", "0"]. */
export function fieldName(parts: readonly string[]): string {
  return parts.map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');
}

export interface Problem {
  /** The offending field's path from the value's root ([] for the root). */
  path: string[];
  /** What is wrong, after the field's name: "must be 0..65535, not 70000", "is not a setting". */
  text: string;
}

/** The first problem of the value against the schema, or null when it conforms. */
export function firstProblem(schema: TSchema, value: unknown): Problem | null {
  const error = Value.Errors(schema, value).First();
  if (!error) return null;
  const path = error.path
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return { path, text: 'is not a setting' };
  if (error.type === ValueErrorType.ObjectRequiredProperty) return { path, text: 'is required' };
  return { path, text: `must be ${expectation(error.schema)}, not ${JSON.stringify(error.value)}` };
}
