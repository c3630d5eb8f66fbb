/** The shapes of the audit trail (GET /api/audit, docs/api.md E.16). */
import { type Static, type TSchema, Type } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const AuditOutcome = Type.Union([Type.Literal('ok'), Type.Literal('failed')]);
export type AuditOutcome = Static<typeof AuditOutcome>;

/** One change a user asked for, whatever came of it. Never a value of the request's body. */
export const AuditEntry = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Increases with each entry' }),
  at: Type.Integer({ description: 'When the engine answered, ms since the epoch' }),
  username: Nullable(
    Type.String({
      description: 'The signed-in user; for a login, the name it tried; null when none was given',
    }),
  ),
  client: Type.String({ description: 'The client address the request came from' }),
  action: Type.String({
    description: 'What was asked, e.g. task.start, auth.password_change, settings.mqtt',
  }),
  route: Type.String({ description: 'Method and route pattern, e.g. PUT /api/task/:task_id' }),
  target: Nullable(
    Type.String({ description: 'What it was done to: the path ids, else the id the answer named' }),
  ),
  outcome: AuditOutcome,
  status: Type.Integer({ description: 'HTTP status of the answer' }),
  code: Type.Integer({ description: 'code of the answer: 0, or the error code (docs/errors.md)' }),
  fields: Type.Array(Type.String(), { description: 'Names (never values) of the JSON body fields sent' }),
  detail: Nullable(Type.String({ description: 'What the answer said of the change, e.g. "upgraded 1.2.0"' })),
});
export type AuditEntry = Static<typeof AuditEntry>;

export const AUDIT_PAGE = { default: 100, max: 500 };

export const AuditQuery = Type.Object(
  {
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    outcome: Type.Optional(AuditOutcome),
    since: Type.Optional(Type.Integer({ minimum: 0, description: 'ms since the epoch, inclusive' })),
    until: Type.Optional(Type.Integer({ minimum: 0, description: 'ms since the epoch, exclusive' })),
    before: Type.Optional(Type.Integer({ minimum: 1, description: 'next_before of the previous page' })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: AUDIT_PAGE.max, description: `Default ${AUDIT_PAGE.default}` }),
    ),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;

export const AuditPage = Type.Object({
  items: Type.Array(AuditEntry, { description: 'Newest first' }),
  next_before: Nullable(Type.Integer({ description: 'before of the next page; null on the last' })),
});
export type AuditPage = Static<typeof AuditPage>;
