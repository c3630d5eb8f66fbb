/** The shapes of alarm review (GET /api/alarms and its neighbours, docs/api.md E.14). */
import { type Static, Type } from '@sinclair/typebox';
import { Clip } from '../clips/clip-schema';
import { DeliveryState } from './delivery';

const Id = Type.String({ minLength: 1, maxLength: 128 });

export const AlarmQuery = Type.Object(
  {
    task_id: Type.Optional(Id),
    app_id: Type.Optional(Id),
    rule: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'A fired rule id, e.g. person:0' }),
    ),
    class_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    since: Type.Optional(Type.Integer({ minimum: 0, description: 'ms since the epoch, inclusive' })),
    until: Type.Optional(Type.Integer({ minimum: 0, description: 'ms since the epoch, exclusive' })),
    min_score: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    reviewed: Type.Optional(Type.Boolean()),
    before: Type.Optional(Type.Integer({ minimum: 1, description: 'next_before of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Default 50' })),
  },
  { additionalProperties: false },
);
export type AlarmQuery = Static<typeof AlarmQuery>;

export const AlarmView = Type.Object({
  event_id: Type.String(),
  task_id: Type.String(),
  seq: Type.Integer(),
  app_id: Type.String(),
  timestamp: Type.Integer({ description: 'ms since the epoch' }),
  rules: Type.Array(Type.String(), { description: 'Fired rule ids' }),
  classes: Type.Array(Type.String()),
  max_score: Type.Number({ description: 'Best object score among the fired rules; 0 for a count alarm' }),
  reviewed_at: Type.Union([Type.Integer(), Type.Null()]),
  has_image: Type.Boolean({ description: 'False once the outbox bound dropped the snapshots' }),
  thumbnail_url: Type.Union([Type.String(), Type.Null()], {
    description: 'Path of the first fired rule’s 320 px thumbnail; null without a kept snapshot',
  }),
  state: DeliveryState,
  attempts: Type.Integer(),
  clip: Type.Union([Clip, Type.Null()], {
    description: "Extension: its clip; null when it is not a video task's alarm, or clips were off",
  }),
});
export type AlarmView = Static<typeof AlarmView>;

export const AlarmPage = Type.Object({
  items: Type.Array(AlarmView),
  total: Type.Integer({ description: 'Alarms matching the filter' }),
  next_before: Type.Union([Type.Integer(), Type.Null()], {
    description: 'before of the next page; null on the last',
  }),
});
export type AlarmPage = Static<typeof AlarmPage>;

export const AlarmFacets = Type.Object({
  tasks: Type.Array(Type.String()),
  apps: Type.Array(Type.String()),
  rules: Type.Array(Type.String()),
  classes: Type.Array(Type.String()),
});
export type AlarmFacets = Static<typeof AlarmFacets>;

export const ReviewBody = Type.Object(
  {
    event_ids: Type.Array(Id, { minItems: 1, maxItems: 500, uniqueItems: true }),
    reviewed: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type ReviewBody = Static<typeof ReviewBody>;

export const AlarmImageQuery = Type.Object(
  {
    rule: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 63, description: 'Index of the fired rule; default 0' }),
    ),
    token: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);
