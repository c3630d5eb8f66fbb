import { type SchemaOptions, type TSchema, Type } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { TEXT_PATTERN_MESSAGES } from './text';

/**
 * One strict validator for every JSON shape the engine accepts: no type coercion, no silent removal
 * of unknown fields, defaults never invented. Query strings get a coercing twin since they arrive as text.
 */
export const strictAjv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false });
export const queryAjv = new Ajv({ allErrors: false, strict: false, coerceTypes: true, useDefaults: true });

/** The field an ajv error is about as a path from the root, e.g. "app_configs[0].polygon"; '' for the root. */
export function ajvErrorField(error: ErrorObject): string {
  const parts = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') parts.push(String(params.missingProperty));
  if (error.keyword === 'additionalProperties') parts.push(String(params.additionalProperty));
  return parts.map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');
}

/** Turns an ajv error into "where: what" with the field named, e.g. "body.app_ids: must be array". */
export function describeAjvError(error: ErrorObject, root: string): string {
  const field = ajvErrorField(error);
  const where = field === '' ? root : field.startsWith('[') ? `${root}${field}` : `${root}.${field}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${where}: is required`;
    case 'additionalProperties':
      return `${where}: is not an allowed field`;
    case 'enum':
      return `${where}: must be one of ${JSON.stringify(params.allowedValues)}`;
    case 'anyOf': {
      return `${where}: has an invalid value`;
    }
    case 'pattern': {
      const meaning = TEXT_PATTERN_MESSAGES[String(params.pattern)];
      return `${where}: ${meaning ?? error.message ?? 'is invalid'}`;
    }
    default:
      return `${where}: ${error.message ?? 'is invalid'}`;
  }
}

export type Check<T> = (value: unknown) => { ok: true; value: T } | { ok: false; error: string };

/** Compiles a TypeBox schema into a checker that names the first offending field. */
export function compileCheck<T>(schema: TSchema, root: string): Check<T> {
  const validate = strictAjv.compile(schema);
  return (value) => {
    if (validate(value)) return { ok: true, value: value as T };
    const first = validate.errors?.[0];
    return { ok: false, error: first ? describeAjvError(first, root) : `${root}: is invalid` };
  };
}

/**
 * A choice among literal values as one JSON-schema enum, so a wrong value is answered with the list
 * of allowed ones ("must be one of [0,1]") instead of ajv's per-branch "must be equal to constant".
 */
export const oneOf = <const T extends readonly (string | number)[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({
    ...options,
    // The type lets query strings ("1") be coerced before the enum is checked; whole numbers are
    // integers, so that the OpenAPI document types them so.
    type: values.every(Number.isInteger)
      ? 'integer'
      : values.every((value) => typeof value === 'number')
        ? 'number'
        : 'string',
    enum: [...values],
  });
