import { type Static, Type } from '@sinclair/typebox';
import { oneOf } from '../schema/ajv';
import { Name } from '../schema/text';

/**
 * Rule shapes of service-interface 2.4-2.6 with the units fixed by api-decisions.md.
 * One schema per shape: the API, the package manifest and the console all validate with these.
 */

const Color = Type.String({
  pattern: '^#[0-9a-fA-F]{6}$',
  description: 'Colour as #RRGGBB',
  examples: ['#ff0000'],
});

export const ClassEntry = Type.Object(
  {
    class_id: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'Model class id (label index as a string)',
    }),
    name: Name({ minLength: 1, maxLength: 64 }),
    color: Color,
    threshold: Type.Number({ minimum: 0, maximum: 1, description: 'Minimum score, 0..1' }),
    min_pixel: Type.Number({
      minimum: 0,
      description: 'Least longer box side in source pixels; 0 = no bound',
    }),
    max_pixel: Type.Number({
      minimum: 0,
      description: 'Greatest longer box side in source pixels; 0 = no bound',
    }),
  },
  { additionalProperties: false },
);
export type ClassEntry = Static<typeof ClassEntry>;

export const ClassCount = Type.Object(
  {
    class_id: Type.String({ minLength: 1, maxLength: 64 }),
    min_count: Type.Integer({ minimum: 0 }),
    max_count: Type.Integer({ minimum: 0, description: '0 = no upper bound' }),
  },
  { additionalProperties: false },
);
export type ClassCount = Static<typeof ClassCount>;

export const Counter = Type.Object(
  {
    numeric_type: oneOf([0, 1], {
      description: '0 = objects present now, 1 = distinct tracks since the task started (flow)',
    }),
    distance: Type.Number({ minimum: 0, description: 'Crowd grouping distance in pixels; 0 = off' }),
    min_count: Type.Integer({ minimum: 0 }),
    max_count: Type.Integer({ minimum: 0, description: '0 = no upper bound' }),
    class_counts: Type.Array(ClassCount, { maxItems: 100 }),
  },
  { additionalProperties: false },
);
export type Counter = Static<typeof Counter>;

export const ClassArea = Type.Object({ color: Color }, { additionalProperties: false });

export const LengthReference = Type.Object(
  {
    pixels: Type.Number({ exclusiveMinimum: 0, description: 'Length of the reference in source pixels' }),
    meters: Type.Number({ exclusiveMinimum: 0, description: 'Real length of the same reference' }),
  },
  { additionalProperties: false },
);

export const Inertia = Type.Object(
  {
    hits: Type.Integer({ minimum: 1, maximum: 30, description: 'Analysed frames the track was matched in' }),
    frames: Type.Integer({ minimum: 1, maximum: 30, description: 'Of this many latest analysed frames' }),
  },
  {
    additionalProperties: false,
    description:
      'Extension: an object counts only once its track was matched in `hits` of the last `frames` analysed frames (video tasks); default 3 of 5',
  },
);
export type Inertia = Static<typeof Inertia>;

const Interval = Type.Number({
  minimum: 0,
  maximum: 86_400,
  description: 'Least seconds between two callbacks of one rule; loitering time for type-3 apps',
});

export const Stationary = oneOf(['always', 'once'], {
  description:
    'Extension: "once" lets a tracked object that stands still fire once per stop instead of every interval (a parked car alarms once); default "always"',
});

export const SpeedLimit = Type.Object(
  {
    class_id: Type.String({ minLength: 1, maxLength: 64 }),
    min_speed: Type.Number({ minimum: 0, maximum: 1000, description: 'm/s' }),
    max_speed: Type.Number({ minimum: 0, maximum: 1000, description: 'm/s; 0 = no upper bound' }),
  },
  { additionalProperties: false },
);
export type SpeedLimit = Static<typeof SpeedLimit>;

const Speed = Type.Array(SpeedLimit, {
  maxItems: 100,
  description:
    'Extension: fires for objects of the class moving at a speed within [min_speed, max_speed] (video tasks with a calibration or length_reference)',
});

/** COCO's person: who attends objects (left_object) and stands in front of the background (removed_object). */
export const DEFAULT_PERSON_CLASS_ID = '0';

const PersonClassId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: `Class id of the people who attend objects or stand in front of the background; default "${DEFAULT_PERSON_CLASS_ID}"`,
});

export const LeftObject = Type.Object(
  {
    seconds: Type.Number({
      minimum: 3,
      maximum: 86_400,
      description:
        'Seconds an object stands still with nobody near before it is left (3 at least: the stationary state)',
    }),
    radius: Type.Number({
      minimum: 0,
      maximum: 100,
      description: "Nobody near: no person's foot point within this many of that person's box heights",
    }),
    meters: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1000,
        description: 'With a ground scale (calibration or length_reference), the distance in metres instead',
      }),
    ),
    person_class_id: Type.Optional(PersonClassId),
  },
  {
    additionalProperties: false,
    description:
      'Extension (type-3 apps with a region or the whole frame): the class entries fire as left objects instead of loitering',
  },
);
export type LeftObject = Static<typeof LeftObject>;

export const RemovedObject = Type.Object(
  {
    seconds: Type.Number({
      minimum: 1,
      maximum: 86_400,
      description: 'Seconds an area must differ from the learned background before it fires',
    }),
    fraction: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      description: "Share of the area's pixels (people left out) that must differ from the background",
    }),
    person_class_id: Type.Optional(PersonClassId),
  },
  {
    additionalProperties: false,
    description:
      'Extension (type-3 apps): fires <app_id>:removed once when a zone (or the region, or the frame) differs from its learned background',
  },
);
export type RemovedObject = Static<typeof RemovedObject>;

/** The rule as stored and as carried by the update body (4.3): classes as an array. */
export const Rule = Type.Object(
  {
    interval: Type.Optional(Interval),
    class_area: Type.Optional(ClassArea),
    classes: Type.Optional(Type.Array(ClassEntry, { maxItems: 1000 })),
    counter: Type.Optional(Counter),
    inertia: Type.Optional(Inertia),
    stationary: Type.Optional(Stationary),
    speed: Type.Optional(Speed),
    left_object: Type.Optional(LeftObject),
    removed_object: Type.Optional(RemovedObject),
  },
  { additionalProperties: false },
);
export type Rule = Static<typeof Rule>;

/** The rule as the listing (2.4) shows it: classes keyed by class_id, length_reference when set. */
export const ListedRule = Type.Object({
  interval: Type.Number(),
  class_area: Type.Optional(ClassArea),
  classes: Type.Optional(Type.Record(Type.String(), ClassEntry)),
  counter: Type.Optional(Counter),
  inertia: Type.Optional(Inertia),
  stationary: Type.Optional(Stationary),
  speed: Type.Optional(Speed),
  left_object: Type.Optional(LeftObject),
  removed_object: Type.Optional(RemovedObject),
  length_reference: Type.Optional(LengthReference),
});
export type ListedRule = Static<typeof ListedRule>;

/** Application kinds (api-decisions): 1 detection, 2 change detection, 3 time-series (video only). */
export const AppType = oneOf([1, 2, 3]);
export type AppType = Static<typeof AppType>;
export const APP_TYPE = { detection: 1, change: 2, timeSeries: 3 } as const;
