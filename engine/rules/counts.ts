import { type Static, Type } from '@sinclair/typebox';

/** Crossings of a counting line since the task started, by direction. */
export const DirectionCounts = Type.Object(
  { in: Type.Integer({ minimum: 0 }), out: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);
export type DirectionCounts = Static<typeof DirectionCounts>;

/** An app's line crossings since the task started: all classes, and per class entry of its rule. */
export const LineCounts = Type.Object(
  {
    in: Type.Integer({ minimum: 0 }),
    out: Type.Integer({ minimum: 0 }),
    classes: Type.Record(Type.String(), DirectionCounts, {
      description: 'Per class_id of the rule, every class entry (zeros until it crosses)',
    }),
  },
  { additionalProperties: false },
);
export type LineCounts = Static<typeof LineCounts>;

/** Objects in each named zone of an app now, all classes and per class entry of its rule. */
export const ZoneOccupancy = Type.Record(
  Type.String(),
  Type.Object(
    {
      count: Type.Integer({ minimum: 0 }),
      classes: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
        description: 'Per class_id of the rule, every class entry (zeros included)',
      }),
    },
    { additionalProperties: false },
  ),
  { description: 'Per zone name, every zone of the app' },
);
export type ZoneOccupancy = Static<typeof ZoneOccupancy>;

/** What an app has counted so far: its counting line's crossings and its zones' occupancy. */
export interface AppCounts {
  line: LineCounts | null;
  zones: ZoneOccupancy | null;
}
