import { type Static, Type } from '@sinclair/typebox';
import { RuleOverride } from '../rules/override';
import { ClassEntry } from '../rules/schema';
import { oneOf } from '../schema/ajv';

/** Answer shapes of effect optimization (4.13) and its sample extensions. */

export const SampleReason = oneOf(['near_threshold', 'flicker', 'counter_toggle'], {
  description:
    'near_threshold: a detection scored close to its class threshold; flicker: a track appeared and vanished within a few frames; counter_toggle: the counter rule switched on or off',
});
export type SampleReason = Static<typeof SampleReason>;

export const Verdict = oneOf(['right', 'wrong', 'none'], {
  description:
    "The operator's judgement of a detection (or, on a sample, of its detections); none = not judged",
});
export type Verdict = Static<typeof Verdict>;

export const RunStatus = oneOf(['running', 'finished', 'interrupted'], {
  description: 'interrupted: the engine stopped while the run collected',
});
export type RunStatus = Static<typeof RunStatus>;

export const EndReason = oneOf(['', 'duration', 'task_closed', 'engine_restart'], {
  description: 'Why the run ended; "" while it runs',
});
export type EndReason = Static<typeof EndReason>;

export const Annotation = Type.Object({
  class_id: Type.String({ description: 'Label index of the model, as in the rule' }),
  label: Type.String({ description: "The model's label of the class" }),
  score: Type.Number(),
  bbox: Type.Array(Type.Number(), {
    minItems: 4,
    maxItems: 4,
    description: '[x, y, width, height] in source pixels, top-left origin (COCO)',
  }),
  track_id: Type.Union([Type.String(), Type.Null()], { description: 'null when no track took it' }),
  hard: Type.Boolean({ description: 'One of the detections that made the frame a hard sample' }),
  verdict: Verdict,
});
export type Annotation = Static<typeof Annotation>;

const Box = Type.Array(Type.Number({ minimum: 0 }), {
  minItems: 4,
  maxItems: 4,
  description: '[x, y, width, height] in source pixels, top-left origin (COCO)',
});

/** An object the model did not find, marked by the operator. */
export const MissedObject = Type.Object({
  class_id: Type.String({ description: 'Label index of the model, as in the rule' }),
  label: Type.String({ description: "The model's label of the class" }),
  bbox: Box,
});
export type MissedObject = Static<typeof MissedObject>;

/** Body of a sample's judgement: any of the three, at least one. */
export const SampleJudgement = Type.Object(
  {
    verdict: Type.Optional(Verdict),
    detections: Type.Optional(
      Type.Array(
        Type.Object(
          {
            index: Type.Integer({ minimum: 0, description: 'Place of the detection in annotations' }),
            verdict: Verdict,
          },
          { additionalProperties: false },
        ),
        { maxItems: 1000 },
      ),
    ),
    missed: Type.Optional(
      Type.Array(
        Type.Object({ class_id: Type.String({ maxLength: 16 }), bbox: Box }, { additionalProperties: false }),
        {
          maxItems: 100,
          description: 'Replaces the objects marked missed',
        },
      ),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'verdict: every hard detection (every detection when none is hard); detections: one each; missed: the objects the model did not find',
  },
);
export type SampleJudgement = Static<typeof SampleJudgement>;

export const SampleView = Type.Object({
  sample_id: Type.Integer({ description: '1, 2, 3 ... within the run; the COCO image id' }),
  app_id: Type.String(),
  frame_id: Type.Integer(),
  timestamp: Type.Integer({ description: 'ms since the epoch, when the frame left the decoder' }),
  width: Type.Integer(),
  height: Type.Integer(),
  reasons: Type.Array(SampleReason),
  annotations: Type.Array(Annotation),
  missed: Type.Array(MissedObject),
  verdict: oneOf(['right', 'wrong', 'none'], {
    description:
      'Summary of the judgements: wrong when a detection is wrong or an object was missed, right when what is judged is right, none before any',
  }),
  image_url: Type.String({ description: 'Path of the source frame (JPEG); token in the header or ?token=' }),
  thumb_url: Type.String({ description: 'The same, 320 px wide' }),
  created_at: Type.Integer(),
});
export type SampleView = Static<typeof SampleView>;

export const SamplePage = Type.Object({
  items: Type.Array(SampleView),
  next_after_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'after_id of the next page; null on the last page',
  }),
});
export type SamplePage = Static<typeof SamplePage>;

export const Proposal = Type.Object({
  app_id: Type.String(),
  class_id: Type.String(),
  name: Type.String({ description: "The class entry's name" }),
  current_threshold: Type.Number({
    description: "The threshold in force on the run's camera now: its override's, else the app rule's",
  }),
  app_threshold: Type.Number({
    description: "The app rule's threshold now (every camera without an override)",
  }),
  proposed_threshold: Type.Union([Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }), Type.Null()], {
    description:
      'null until the operator has judged a detection of the class (or marked one missed): no threshold is proposed from unjudged samples',
  }),
  judged: Type.Integer({
    description: 'Judged detections of the class and objects marked missed that the proposal rests on',
  }),
  basis: Type.Object({
    stable_tracks: Type.Integer(),
    flickering_tracks: Type.Integer(),
    right: Type.Integer({ description: 'Detections of the class judged right' }),
    wrong: Type.Integer({ description: 'Detections of the class judged wrong' }),
    missed: Type.Integer({
      description: 'Objects of the class marked missed (each one lowers F1 at any threshold)',
    }),
  }),
  f1: Type.Object({
    current: Type.Union([Type.Number(), Type.Null()]),
    proposed: Type.Union([Type.Number(), Type.Null()]),
  }),
  alarms: Type.Object(
    {
      current: Type.Integer(),
      proposed: Type.Integer(),
      change: Type.Integer(),
    },
    {
      description:
        'Collected detections of the class (in the zone and size bounds) that pass the current and the proposed threshold',
    },
  ),
  apply: Type.Union(
    [
      Type.Object({
        method: Type.Literal('PUT'),
        path: Type.String(),
        body: Type.Object({ rule: Type.Object({ classes: Type.Array(ClassEntry) }) }),
      }),
      Type.Null(),
    ],
    {
      description: "The 4.3 request that applies the proposal to the app's rule (every camera) as it is now",
    },
  ),
  apply_camera: Type.Union(
    [
      Type.Object({
        method: Type.Literal('PUT'),
        path: Type.String(),
        body: Type.Object({ rule_overrides: Type.Record(Type.String(), RuleOverride) }),
      }),
      Type.Null(),
    ],
    {
      description:
        "The update-task request that applies the proposal to the run's camera only, as its override (its other overridden values kept)",
    },
  ),
});
export type Proposal = Static<typeof Proposal>;

export const OptimizationView = Type.Object({
  optimization_id: Type.String(),
  task_id: Type.String(),
  app_ids: Type.Array(Type.String()),
  status: RunStatus,
  end_reason: EndReason,
  duration: Type.Integer({ description: 'Seconds of collection asked for' }),
  max_samples: Type.Integer(),
  created_at: Type.Integer(),
  ends_at: Type.Integer(),
  finished_at: Type.Union([Type.Integer(), Type.Null()]),
  frames_analysed: Type.Integer({ description: 'Analysed frames the run has seen' }),
  sample_count: Type.Integer({ description: 'Samples stored' }),
  samples_by_reason: Type.Object({
    near_threshold: Type.Integer(),
    flicker: Type.Integer(),
    counter_toggle: Type.Integer(),
  }),
  verdicts: Type.Object({ right: Type.Integer(), wrong: Type.Integer(), none: Type.Integer() }),
  samples_dropped: Type.Integer({ description: 'Hard samples not stored because the writer was busy' }),
  sample_limit: Type.Union([oneOf(['max_samples', 'disk']), Type.Null()], {
    description: 'Why no more samples are stored; the statistics go on until the run ends',
  }),
  image_bytes: Type.Integer(),
  proposals: Type.Array(Proposal),
});
export type OptimizationView = Static<typeof OptimizationView>;
