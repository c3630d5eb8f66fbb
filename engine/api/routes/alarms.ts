import { Type } from '@sinclair/typebox';
import type { AlarmReview } from '../../events/review';
import { AlarmFacets, AlarmImageQuery, AlarmPage, AlarmQuery, ReviewBody } from '../../events/review-schema';
import { Envelope, ok } from '../envelope';
import type { RoutePlugin } from '../route-plugin';
import { PathId } from '../schemas';

const AlarmParams = Type.Object({ event_id: PathId });
const TokenQuery = Type.Object(
  { token: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: false },
);

/** Alarm review (extension): stored alarms filtered and paged, reviewed state, pictures, export. */
/** A link to an alarm's picture or export opens that alarm's pictures and export alone. */
const alarmLink = (params: Record<string, string>) => ['alarm', params.event_id];

export const alarmRoutes: RoutePlugin<{ alarms: AlarmReview }> = async (app, { alarms }) => {
  app.get(
    '/api/alarms',
    {
      schema: {
        tags: ['events'],
        summary: 'Extension: stored alarms, newest first, filtered and paged (alarm review)',
        querystring: AlarmQuery,
        response: { 200: Envelope(AlarmPage) },
      },
    },
    async (request) => ok(alarms.page(request.query)),
  );

  app.get(
    '/api/alarms/facets',
    {
      schema: {
        tags: ['events'],
        summary: 'Extension: the cameras, apps, rules and classes stored alarms have, for filter lists',
        response: { 200: Envelope(AlarmFacets) },
      },
    },
    async () => ok(alarms.facets()),
  );

  app.put(
    '/api/alarms/review',
    {
      schema: {
        tags: ['events'],
        summary: 'Extension: mark up to 500 alarms reviewed, or not',
        body: ReviewBody,
        response: { 200: Envelope(Type.Object({ updated: Type.Integer() })) },
      },
    },
    async (request) => ok({ updated: alarms.review(request.body.event_ids, request.body.reviewed) }),
  );

  const jpeg = { 'content-type': 'image/jpeg', 'cache-control': 'private, max-age=86400' };
  app.get(
    '/api/alarms/:event_id/thumbnail',
    {
      config: { linkScope: alarmLink, answers: ['image/jpeg'], refusals: ['EVENT_NOT_FOUND'] },
      schema: {
        tags: ['events'],
        summary:
          "Extension: a fired rule's snapshot 320 px wide (JPEG); token in Authorization, or a link token (POST /api/auth/link) in ?token=",
        params: AlarmParams,
        querystring: AlarmImageQuery,
      },
    },
    async (request, reply) =>
      reply.headers(jpeg).send(await alarms.thumbnail(request.params.event_id, request.query.rule ?? 0)),
  );

  app.get(
    '/api/alarms/:event_id/snapshot',
    {
      config: { linkScope: alarmLink, answers: ['image/jpeg'], refusals: ['EVENT_NOT_FOUND'] },
      schema: {
        tags: ['events'],
        summary:
          "Extension: a fired rule's whole annotated snapshot (JPEG); token in Authorization, or a link token (POST /api/auth/link) in ?token=",
        params: AlarmParams,
        querystring: AlarmImageQuery,
      },
    },
    async (request, reply) =>
      reply.headers(jpeg).send(alarms.snapshot(request.params.event_id, request.query.rule ?? 0)),
  );

  app.get(
    '/api/alarms/:event_id/export',
    {
      config: { linkScope: alarmLink, answers: ['application/zip'], refusals: ['EVENT_NOT_FOUND'] },
      schema: {
        tags: ['events'],
        summary:
          'Extension: one alarm as a zip (alarm.json and its snapshots); token in Authorization, or a link token (POST /api/auth/link) in ?token=',
        params: AlarmParams,
        querystring: TokenQuery,
      },
    },
    async (request, reply) => {
      const { event_id } = request.params;
      const zip = await alarms.export(event_id);
      return reply
        .header('content-type', 'application/zip')
        .header('content-disposition', `attachment; filename="alarm-${event_id.replace(/[^\w-]/g, '_')}.zip"`)
        .send(zip);
    },
  );
};
