import { type TSchema, Type } from '@sinclair/typebox';
import { oneOf } from '../schema/ajv';

/** The envelope of 2.1 around a success answer's data. */
export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({ code: oneOf([0]), msg: Type.String(), data });

export const ErrorEnvelope = Type.Object({
  code: Type.Integer({
    description: 'Five-digit error code; its first three digits are the HTTP status (docs/errors.md)',
  }),
  msg: Type.String({ description: 'What was wrong, naming the field' }),
  field: Type.Optional(
    Type.String({
      description:
        'Extension: the request field at fault where one is, as a path from the body or query root, e.g. app_configs[0].polygon',
    }),
  ),
  reason: Type.Optional(
    Type.String({
      description:
        'Extension: the kind of refusal where a code has several; for a source that did not open (50301, 42207) one of unresolved, refused, timeout, denied, not_found, not_video, too_large, file_refused, no_frame',
    }),
  ),
});

export const ok = <T>(data: T) => ({ code: 0 as const, msg: 'success', data });

/** `{"code":0,"msg":"success","data":[` and `]}`: ok([]) serialized, cut around its empty array. */
const ARRAY_HEAD = Buffer.from(JSON.stringify(ok([])).slice(0, -2));
const ARRAY_TAIL = Buffer.from(']}');
const COMMA = Buffer.from(',');

/** The envelope of a success answer whose data is an array of elements already serialized as JSON. */
export function okArrayJson(elements: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [ARRAY_HEAD];
  elements.forEach((element, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(element);
  });
  parts.push(ARRAY_TAIL);
  return Buffer.concat(parts);
}
