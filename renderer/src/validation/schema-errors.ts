/**
 * Checks a value against one of the engine's own TypeBox schemas and turns every problem into a
 * translatable message on its field. TypeBox's interpreter (Value) is used, not a compiler: the
 * console's CSP forbids generating code, which TypeCompiler and ajv need.
 */
import { Kind, type TSchema, TypeRegistry } from '@sinclair/typebox';
import { Value, type ValueError, ValueErrorType } from '@sinclair/typebox/value';
import type { MessageKey, Params } from '../i18n';

/*
 * The engine's oneOf() is a Type.Unsafe enum (so ajv lists the allowed values). Value needs to be told
 * how to check that kind: the value is one of the enum's members.
 */
if (!TypeRegistry.Has('Unsafe')) {
  TypeRegistry.Set('Unsafe', (schema: { enum?: unknown[] }, value: unknown) =>
    Array.isArray(schema.enum) ? schema.enum.includes(value) : true,
  );
}

export interface FieldMessage {
  key: MessageKey;
  params?: Params;
  /** The text as the engine would give it, for problems without a translated message. */
  text?: string;
}

/** Problems by field path: "rule.classes.0.threshold" (dots, array indexes as numbers). */
export type FieldErrors = Record<string, FieldMessage>;

/** "/rule/classes/0/threshold" -> "rule.classes.0.threshold". */
export function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function limit(schema: TSchema, name: string): string {
  const value = (schema as Record<string, unknown>)[name];
  return typeof value === 'number' ? String(value) : '?';
}

function messageOf(error: ValueError): FieldMessage {
  const schema = error.schema;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return { key: 'validation.required' };
    case ValueErrorType.ObjectAdditionalProperties:
      return { key: 'validation.notAllowed' };
    case ValueErrorType.Number:
      return { key: 'validation.number' };
    case ValueErrorType.Integer:
      return { key: 'validation.integer' };
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return { key: 'validation.min', params: { min: limit(schema, 'minimum') } };
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return { key: 'validation.max', params: { max: limit(schema, 'maximum') } };
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMinimum:
      return { key: 'validation.above', params: { min: limit(schema, 'exclusiveMinimum') } };
    case ValueErrorType.StringMinLength:
      return Number(limit(schema, 'minLength')) === 1
        ? { key: 'validation.empty' }
        : { key: 'validation.minLength', params: { min: limit(schema, 'minLength') } };
    case ValueErrorType.StringMaxLength:
      return { key: 'validation.maxLength', params: { max: limit(schema, 'maxLength') } };
    case ValueErrorType.StringPattern:
      return String((schema as { pattern?: string }).pattern).includes('#')
        ? { key: 'validation.color' }
        : { key: 'validation.pattern' };
    case ValueErrorType.ArrayMinItems:
      return { key: 'validation.minItems', params: { min: limit(schema, 'minItems') } };
    case ValueErrorType.ArrayMaxItems:
      return { key: 'validation.maxItems', params: { max: limit(schema, 'maxItems') } };
    case ValueErrorType.ArrayUniqueItems:
      return { key: 'validation.unique' };
    case ValueErrorType.Kind:
      if (schema[Kind] === 'Unsafe' && Array.isArray((schema as { enum?: unknown[] }).enum)) {
        return {
          key: 'validation.oneOf',
          params: { values: JSON.stringify((schema as unknown as { enum: unknown[] }).enum) },
        };
      }
      return { key: 'validation.invalid', text: error.message };
    default:
      return { key: 'validation.invalid', text: error.message };
  }
}

/** Every problem of `value` against `schema`, the first one per field. Empty when it is valid. */
export function schemaErrors(schema: TSchema, value: unknown): FieldErrors {
  const errors: FieldErrors = {};
  for (const error of Value.Errors(schema, value)) {
    const path = pointerToPath(error.path);
    // A union reports its branches' errors too; the first, most specific one per field is kept.
    if (!(path in errors)) errors[path] = messageOf(error);
  }
  return errors;
}

/** The envelope's field ("app_configs[0].polygon") as a form path ("app_configs.0.polygon"). */
export function fieldPath(field: string): string {
  return field.replace(/\[(\d+)\]/g, '.$1');
}

/**
 * "rule.classes[0].min_pixel: 5 is greater than max_pixel 2" (a problem line of the engine's pure
 * ruleProblems, run in the console) -> the field path and what is wrong. Null when it names no field.
 */
export function splitProblem(text: string, root = ''): { path: string; what: string } | null {
  const match = /^([A-Za-z_]\w*(?:\.\w+|\[\d+\])*): (.*)$/s.exec(text);
  if (!match) return null;
  let path = (match[1] ?? '').replace(/\[(\d+)\]/g, '.$1');
  if (root && path.startsWith(`${root}.`)) path = path.slice(root.length + 1);
  else if (root && path === root) path = '';
  return { path, what: match[2] ?? '' };
}
