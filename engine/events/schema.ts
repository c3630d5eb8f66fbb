import { type Static, type TProperties, Type } from '@sinclair/typebox';
import { ClipRef } from '../clips/clip-schema';
import { DirectionCounts } from '../rules/counts';

/**
 * The callback body of part 6 with the units and extensions fixed by api-decisions.md.
 * One schema: the engine builds events against it and the tests validate received callbacks with it.
 */

export const ReportedObject = Type.Object(
  {
    track_id: Type.String(),
    x: Type.Integer({ description: 'Centre of the box, source-frame pixels' }),
    y: Type.Integer({ description: 'Centre of the box, source-frame pixels' }),
    w: Type.Integer({ minimum: 0 }),
    h: Type.Integer({ minimum: 0 }),
    score: Type.Number({ minimum: 0, maximum: 1 }),
    class_id: Type.String(),
    name: Type.String(),
    direction: Type.Optional(Type.Union([Type.Literal('in'), Type.Literal('out')])),
    area: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Changed pixels of a change region, source-frame pixels' }),
    ),
    zones: Type.Optional(
      Type.Array(Type.String(), { description: "Names of the app's zones the foot point stands in" }),
    ),
    dwell: Type.Optional(
      Type.Number({
        minimum: 0,
        description: "Seconds the track has stood in the app's region (video tasks)",
      }),
    ),
    zone_dwell: Type.Optional(
      Type.Record(Type.String(), Type.Number({ minimum: 0 }), {
        description:
          'Seconds the track has stood in each zone it stands in now (video tasks, apps with zones)',
      }),
    ),
    state: Type.Optional(
      Type.Union([Type.Literal('stationary'), Type.Literal('moving')], {
        description: 'stationary: the foot point stayed within 10% of the box size for 3 s (video tasks)',
      }),
    ),
    speed: Type.Optional(
      Type.Number({
        minimum: 0,
        description: 'm/s on the ground (apps with a calibration or length_reference)',
      }),
    ),
    heading: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 360,
        description: "Direction of travel, degrees from the ground's +x towards +y",
      }),
    ),
    left: Type.Optional(
      Type.Number({ minimum: 0, description: 'Seconds a left object has stood still with nobody near' }),
    ),
    removed: Type.Optional(
      Type.Number({
        minimum: 0,
        description: "Seconds a removed object's area has differed from its background",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ReportedObject = Static<typeof ReportedObject>;

export const FiredRule = Type.Object(
  {
    id: Type.String({
      description: '<app_id>:<class_id> for a class rule, <app_id>:counter for a count alarm',
    }),
    class_id: Type.String(),
    image: Type.String({ description: 'Annotated frame, base64 JPEG without a data: prefix' }),
    objects: Type.Array(ReportedObject),
    count: Type.Optional(Type.Integer({ minimum: 0 })),
    counts: Type.Optional(DirectionCounts),
    counts_by_class: Type.Optional(
      Type.Record(Type.String(), DirectionCounts, {
        description: "Extension: a line counter's crossings since the start per class_id of its rule",
      }),
    ),
    zone_counts: Type.Optional(
      Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
        description: "Extension: a counter's count per zone name of its app",
      }),
    ),
  },
  { additionalProperties: false },
);
export type FiredRule = Static<typeof FiredRule>;

export const FrameRef = Type.Object(
  { height: Type.Integer(), width: Type.Integer(), id: Type.Integer({ description: 'Frame number' }) },
  { additionalProperties: false },
);

/** Query parameters of an image upload (4.8, 4.9), echoed into its results. */
const imageFields = {
  image_id: Type.Integer({ minimum: 0, description: "The upload's image_id, else a per-task counter" }),
  device_id: Type.Optional(Type.String({ description: "The upload's device_id, when given" })),
};

export const MessageData = Type.Object(
  {
    frame: FrameRef,
    rules: Type.Array(FiredRule, { minItems: 1 }),
    image_id: Type.Optional(imageFields.image_id),
    device_id: imageFields.device_id,
    clip: Type.Optional(ClipRef),
  },
  { additionalProperties: false },
);

/** The answer of an image upload (4.8, 4.9): what its callbacks carry, all applications together. */
export const ImageResult = Type.Object(
  { ...imageFields, frame: FrameRef, rules: Type.Array(FiredRule) },
  { additionalProperties: false },
);
export type ImageResult = Static<typeof ImageResult>;

/** Task-level events (extension) carry the task's state instead of a frame. */
export const TaskEventData = Type.Object(
  {
    close_code: Type.Optional(Type.Integer()),
    status: Type.String(),
    dump: Type.String(),
  },
  { additionalProperties: false },
);

/** Task-level event kinds (extension), beside `message`. */
const TaskEventKind = Type.Union([
  Type.Literal('task_closed'),
  Type.Literal('stream_lost'),
  Type.Literal('stream_restored'),
]);

export const EventKind = Type.Union([Type.Literal('message'), TaskEventKind]);
export type EventKind = Static<typeof EventKind>;

const envelopeFields = {
  task_id: Type.String(),
  app_id: Type.String({ description: 'Empty for task-level events' }),
  business_id: Type.String(),
  timestamp: Type.Integer({ description: 'ms since the Unix epoch' }),
};

/** The two event shapes (a frame's results, a task's state) with the given extra fields. */
function eventUnion<F extends TProperties>(extra: F) {
  return Type.Union([
    Type.Object(
      { event: Type.Literal('message'), ...envelopeFields, ...extra, data: MessageData },
      { additionalProperties: false },
    ),
    Type.Object(
      { event: TaskEventKind, ...envelopeFields, ...extra, data: TaskEventData },
      { additionalProperties: false },
    ),
  ]);
}

/** What the analysis hands to the outbox; the outbox adds event_id and seq when it stores it. */
export const NewEvent = eventUnion({});
export type NewEvent = Static<typeof NewEvent>;

/** The body POSTed to report_url (and published on MQTT). */
export const CallbackBody = eventUnion({
  event_id: Type.String({ description: 'Stable id: receivers drop duplicates by it' }),
  seq: Type.Integer({ minimum: 1, description: 'Per task, gap-free: receivers detect loss by it' }),
  late: Type.Optional(
    Type.Boolean({
      description:
        'Extension (cluster mode): true for an event that a node stored after another had taken its task over; it arrives after events that followed it, with the next seq and its own event_id',
    }),
  ),
});
export type CallbackBody = Static<typeof CallbackBody>;
