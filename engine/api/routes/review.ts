import type { ReviewItems } from '../../events/review-items';
import {
  CountsQuery,
  IgnoreBody,
  IgnoreResult,
  ItemParams,
  ItemsReviewBody,
  ItemsReviewed,
  REVIEW_IDS_MAX,
  ReviewCounts,
  ReviewItemDetail,
  ReviewItemPage,
  ReviewItemQuery,
  Timeline,
  TimelineQuery,
} from '../../events/review-items-schema';
import { Envelope, ok } from '../envelope';
import { ApiError } from '../errors';
import type { RoutePlugin } from '../route-plugin';

const TASK_CHANGE = ['REVIEW_ITEM_NOT_FOUND', 'TASK_NOT_FOUND', 'TASK_CLOSED'] as const;
/** The bulk review's path, which the router would otherwise give to one item's GET as its item_id. */
const BULK = 'review';

/** Review items (extension, issue 35): the alarms of one visit, listed, marked, timed and ignored. */
export const reviewRoutes: RoutePlugin<{ review: ReviewItems }> = async (app, { review }) => {
  app.get(
    '/api/review/items',
    {
      schema: {
        tags: ['events'],
        summary: "Extension: review items (one object's visit), newest first, filtered and paged",
        querystring: ReviewItemQuery,
        response: { 200: Envelope(ReviewItemPage) },
      },
    },
    async (request) => ok(review.page(request.query)),
  );

  app.get(
    '/api/review/items/:item_id',
    {
      config: { refusals: ['REVIEW_ITEM_NOT_FOUND', 'METHOD_NOT_ALLOWED'] },
      // Once authenticated, before the query is checked: a wrong method is 405 whatever it carries.
      onRequest: async (request) => {
        if ((request.params as { item_id?: string }).item_id === BULK)
          throw new ApiError(
            'METHOD_NOT_ALLOWED',
            `${request.method} is not allowed on /api/review/items/${BULK}; allowed: POST`,
            { allow: 'POST' },
          );
      },
      schema: {
        tags: ['events'],
        summary: 'Extension: one review item with its alarms, oldest first',
        params: ItemParams,
        response: { 200: Envelope(ReviewItemDetail) },
      },
    },
    async (request) => ok(review.item(request.params.item_id)),
  );

  app.post(
    `/api/review/items/${BULK}`,
    {
      schema: {
        tags: ['events'],
        summary: `Extension: mark review items and their alarms reviewed, or not: up to ${REVIEW_IDS_MAX} by id, or every item a filter matches ("all shown")`,
        body: ItemsReviewBody,
        response: { 200: Envelope(ItemsReviewed) },
      },
    },
    async (request) => ok({ updated: review.review(request.body) }),
  );

  app.post(
    '/api/review/items/:item_id/ignore',
    {
      config: { refusals: TASK_CHANGE },
      schema: {
        tags: ['events'],
        summary:
          "Extension: ignore the item's object on its camera (its classes, or a mask around it): propose, or apply as a task update",
        params: ItemParams,
        body: IgnoreBody,
        response: { 200: Envelope(IgnoreResult) },
      },
    },
    async (request) => ok(review.ignore(request.params.item_id, request.body)),
  );

  app.get(
    '/api/review/timeline',
    {
      schema: {
        tags: ['events'],
        summary: "Extension: a camera's review items over a span of at most 7 days, oldest first",
        querystring: TimelineQuery,
        response: { 200: Envelope(Timeline) },
      },
    },
    async (request) => ok(review.timeline(request.query)),
  );

  app.get(
    '/api/review/counts',
    {
      schema: {
        tags: ['events'],
        summary: 'Extension: review items and unreviewed ones, in all and per camera',
        querystring: CountsQuery,
        response: { 200: Envelope(ReviewCounts) },
      },
    },
    async (request) => ok(review.counts(request.query.since)),
  );
};
