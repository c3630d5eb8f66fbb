/** The shapes of review items (issue 35; /api/review/*, docs/api.md E.14a): the alarms of one visit. */
import { type Static, Type } from '@sinclair/typebox';
import { Clip } from '../clips/clip-schema';
import { AppConfigUpdate, RuleOverrides } from '../tasks/schema';
import { AlarmQuery, AlarmView } from './review-schema';

/** Items marked reviewed by id in one call. */
export const REVIEW_IDS_MAX = 1000;
/** Items a timeline answers with at most (truncated beyond). */
export const TIMELINE_ITEMS_MAX = 2000;
/** The longest span a timeline covers. */
export const TIMELINE_SPAN_MAX_MS = 7 * 24 * 3600_000;
/** Alarms an item's detail lists at most (oldest first; `more` beyond). */
export const ITEM_ALARMS_MAX = 500;

const Id = Type.String({ minLength: 1, maxLength: 128 });

/** What the list (and "all shown") narrows items to; the alarm filter's fields an item has. */
export const ReviewFilter = Type.Object(
  {
    task_id: AlarmQuery.properties.task_id,
    app_id: AlarmQuery.properties.app_id,
    class_id: AlarmQuery.properties.class_id,
    since: Type.Optional(
      Type.Integer({ minimum: 0, description: "ms since the epoch, inclusive, of the item's start" }),
    ),
    until: Type.Optional(
      Type.Integer({ minimum: 0, description: "ms since the epoch, exclusive, of the item's start" }),
    ),
    reviewed: AlarmQuery.properties.reviewed,
    min_score: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Least peak score' })),
  },
  { additionalProperties: false },
);
export type ReviewFilter = Static<typeof ReviewFilter>;

export const ReviewItemQuery = Type.Object(
  {
    ...ReviewFilter.properties,
    before: Type.Optional(Type.Integer({ minimum: 1, description: 'next_before of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Default 50' })),
  },
  { additionalProperties: false },
);
export type ReviewItemQuery = Static<typeof ReviewItemQuery>;

export const ReviewItem = Type.Object({
  item_id: Type.String(),
  task_id: Type.String(),
  task_name: Type.Union([Type.String(), Type.Null()], {
    description: "The camera's name when the task still exists",
  }),
  track_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The tracked object of the visit; null for alarms without a track (counts, images)',
  }),
  apps: Type.Array(Type.String()),
  rules: Type.Array(Type.String()),
  classes: Type.Array(Type.String()),
  start: Type.Integer({ description: 'ms since the epoch: the first alarm' }),
  end: Type.Integer({ description: 'ms since the epoch: the last alarm' }),
  alarm_count: Type.Integer(),
  peak_score: Type.Number(),
  best_event_id: Type.String({ description: "The alarm with the peak score: its thumbnail is the item's" }),
  first_event_id: Type.String({ description: "The first alarm: its clip is the item's" }),
  thumbnail_url: AlarmView.properties.thumbnail_url,
  clip: Type.Union([Clip, Type.Null()], { description: "The first alarm's clip; null where it has none" }),
  reviewed_at: Type.Union([Type.Integer(), Type.Null()]),
});
export type ReviewItem = Static<typeof ReviewItem>;

export const ReviewItemPage = Type.Object({
  items: Type.Array(ReviewItem),
  total: Type.Integer({ description: 'Items matching the filter' }),
  next_before: Type.Union([Type.Integer(), Type.Null()], {
    description: 'before of the next page; null on the last',
  }),
});
export type ReviewItemPage = Static<typeof ReviewItemPage>;

export const ReviewItemDetail = Type.Object({
  ...ReviewItem.properties,
  alarms: Type.Array(AlarmView, { description: `Its alarms, oldest first, at most ${ITEM_ALARMS_MAX}` }),
  more: Type.Boolean({ description: 'The item has more alarms than listed' }),
});
export type ReviewItemDetail = Static<typeof ReviewItemDetail>;

export const ItemParams = Type.Object({ item_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const ItemsReviewBody = Type.Union([
  Type.Object(
    {
      item_ids: Type.Array(Id, { minItems: 1, maxItems: REVIEW_IDS_MAX, uniqueItems: true }),
      reviewed: Type.Boolean(),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      filter: ReviewFilter,
      reviewed: Type.Boolean(),
    },
    { additionalProperties: false, description: '"All shown": every item the filter matches' },
  ),
]);
export type ItemsReviewBody = Static<typeof ItemsReviewBody>;

export const ItemsReviewed = Type.Object({
  updated: Type.Integer({ description: 'Items marked (their alarms with them)' }),
});

export const TimelineQuery = Type.Object(
  {
    task_id: Id,
    since: Type.Integer({ minimum: 0, description: 'ms since the epoch' }),
    until: Type.Integer({
      minimum: 0,
      description: `ms since the epoch; at most ${TIMELINE_SPAN_MAX_MS / 86_400_000} days after since`,
    }),
  },
  { additionalProperties: false },
);
export type TimelineQuery = Static<typeof TimelineQuery>;

export const TimelineItem = Type.Object({
  item_id: Type.String(),
  start: Type.Integer(),
  end: Type.Integer(),
  peak_score: Type.Number(),
  classes: Type.Array(Type.String()),
  reviewed: Type.Boolean(),
});

export const Timeline = Type.Object({
  items: Type.Array(TimelineItem, {
    description: `Items overlapping [since, until), oldest first, at most ${TIMELINE_ITEMS_MAX}`,
  }),
  truncated: Type.Boolean(),
});
export type Timeline = Static<typeof Timeline>;

export const CountsQuery = Type.Object(
  {
    since: Type.Optional(
      Type.Integer({ minimum: 0, description: "ms since the epoch, of the item's start" }),
    ),
  },
  { additionalProperties: false },
);

const Tally = Type.Object({ total: Type.Integer(), unreviewed: Type.Integer() });
export const ReviewCounts = Type.Object({
  total: Type.Integer(),
  unreviewed: Type.Integer(),
  by_task: Type.Record(Type.String(), Tally),
});
export type ReviewCounts = Static<typeof ReviewCounts>;

export const IgnoreBody = Type.Object(
  {
    kind: Type.Union([Type.Literal('class'), Type.Literal('mask')]),
    apply: Type.Boolean({ description: 'false: only propose' }),
  },
  { additionalProperties: false },
);
export type IgnoreBody = Static<typeof IgnoreBody>;

/** The task update that ignores the item's object on its camera (PUT /api/task/{task_id}, 4.7). */
export const IgnoreProposal = Type.Object({
  kind: IgnoreBody.properties.kind,
  task_id: Type.String(),
  apps: Type.Array(Type.String(), { description: 'The apps that fired and that the task still runs' }),
  classes: Type.Array(Type.String(), { description: 'kind class: the classes dropped on this camera' }),
  mask: Type.Union([Type.Array(Type.Array(Type.Number())), Type.Null()], {
    description: "kind mask: the region excluded, [x, y] source-frame pixels (the object's boxes, padded)",
  }),
  frame_fraction: Type.Union([Type.Number(), Type.Null()], {
    description: "kind mask: the mask's share of the frame (refused above 0.5)",
  }),
  request: Type.Object({
    method: Type.Literal('PUT'),
    path: Type.String(),
    body: Type.Object({
      rule_overrides: Type.Optional(RuleOverrides),
      app_configs: Type.Optional(Type.Array(AppConfigUpdate)),
    }),
  }),
});
export type IgnoreProposal = Static<typeof IgnoreProposal>;

export const IgnoreResult = Type.Object({
  proposal: IgnoreProposal,
  applied: Type.Boolean(),
});
export type IgnoreResult = Static<typeof IgnoreResult>;
