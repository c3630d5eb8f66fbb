import { Type } from '@sinclair/typebox';
import type { Accounts } from '../../auth/accounts';
import { CallbackSettings } from '../../callbacks/default-receiver';
import { MQTT_TEST_TIMEOUT_MS, MqttTestResult } from '../../callbacks/mqtt-probe';
import { MqttSettingsBody, MqttSettingsView } from '../../callbacks/mqtt-settings';
import type { ClusterNode } from '../../cluster/cluster-node';
import { DeliveryRecord, DeliveryState, EventItem } from '../../events/delivery';
import { OutboxEventLog } from '../../events/event-log';
import { ConsoleFeeds, MAX_FEEDS, REPLAY_LIMIT } from '../../events/feed';
import type { TaskRegistry } from '../../tasks/registry';
import { checkReportUrl } from '../../tasks/validation';
import { holdToken, tokenEnded } from '../authenticate';
import type { ApiContext } from '../context';
import { Envelope, ok } from '../envelope';
import { ApiError } from '../errors';
import type { RoutePlugin } from '../route-plugin';
import { PathId, TaskParams } from '../schemas';

const Id = Type.String({ minLength: 1, maxLength: 128 });
/** When a feed refused for want of room may try again (EventSource itself gives up on a refusal). */
const FEEDS_RETRY_AFTER_S = 5;

const EventsQuery = Type.Object(
  {
    after_seq: Type.Optional(Type.Integer({ minimum: 0, description: 'Return events with a larger seq' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Default 100' })),
    state: Type.Optional(DeliveryState),
    with_body: Type.Optional(Type.Boolean({ description: 'Include each callback body (images too)' })),
  },
  { additionalProperties: false },
);

const EventPage = Type.Object({
  task_id: Type.String(),
  last_seq: Type.Integer({ description: 'The seq of the task’s latest event; 0 when it has none' }),
  next_after_seq: Type.Union([Type.Integer(), Type.Null()], {
    description: 'after_seq of the next page; null on the last page',
  }),
  items: Type.Array(EventItem),
});

const EventParams = Type.Object({ event_id: PathId });

const Backlog = Type.Object({
  pending: Type.Integer({ description: 'Events waiting for delivery' }),
  delivered: Type.Integer(),
  dead: Type.Integer(),
  no_receiver: Type.Integer(),
  tasks_pending: Type.Integer({ description: 'Tasks with at least one pending event' }),
  oldest_pending_at: Type.Union([Type.Integer(), Type.Null()]),
  image_bytes: Type.Integer({ description: 'Base64 snapshot text kept in the outbox' }),
  image_limit_bytes: Type.Integer(),
  images_dropped: Type.Integer({ description: 'Events whose snapshots the size bound dropped' }),
  held_events: Type.Integer({
    description: 'Events handed over while the data disk was full, waiting in memory to be stored',
  }),
  held_bytes: Type.Integer({ description: 'Their size as JSON' }),
  lost_events: Type.Integer({
    description: 'Events not stored since the engine started: the disk was full and the memory hold too',
  }),
  unrecorded_attempts: Type.Integer({
    description: 'Delivery attempts whose outcome waits for disk space; no attempt starts meanwhile',
  }),
  mqtt: Type.Object({
    enabled: Type.Boolean(),
    connected: Type.Boolean(),
    backlog: Type.Integer(),
  }),
});

const StreamQuery = Type.Object(
  {
    token: Type.Optional(
      Type.String({ maxLength: 512, description: 'For EventSource, which cannot send Authorization' }),
    ),
    task_id: Type.Optional(Id),
    last_event_id: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Replay stored events after this id (as Last-Event-ID does)' }),
    ),
  },
  { additionalProperties: false },
);

/** Result delivery seen from the API: the events of a task, redelivery, backlog, live feed, MQTT settings. */
export const eventRoutes: RoutePlugin<{
  accounts: Pick<Accounts, 'hold'>;
  events: ApiContext['events'];
  tasks: Pick<TaskRegistry, 'get'>;
  cluster?: Pick<ClusterNode, 'events' | 'history'>;
}> = async (app, { accounts, events, tasks, cluster }) => {
  const { outbox, mqtt, bus, held, delivery, receiver } = events;
  // A cluster node's feed is the site's: every node's events, at ids that resume on any node.
  const feeds = new ConsoleFeeds(cluster?.events ?? new OutboxEventLog(outbox, bus));
  // Open streams never end on their own; the server could not close while they last.
  app.addHook('preClose', async () => feeds.closeAll());

  app.get(
    '/api/task/:task_id/events',
    {
      config: { ownerBound: true, refusals: ['TASK_NOT_FOUND'] },
      schema: {
        tags: ['events'],
        summary: 'Extension: a task’s events in seq order with their delivery state, paged by seq',
        params: TaskParams,
        querystring: EventsQuery,
        response: { 200: Envelope(EventPage) },
      },
    },
    async (request) => {
      const { task_id } = request.params;
      const query = {
        after_seq: request.query.after_seq ?? 0,
        limit: request.query.limit ?? 100,
        state: request.query.state,
        with_body: request.query.with_body ?? false,
      };
      // A cluster node lists the task's whole chain, what earlier owners delivered included.
      const page = cluster ? await cluster.history(task_id, query) : outbox.list(task_id, query);
      if (page) return ok({ task_id, ...page });
      // A task without events yet; unknown tasks answer 40401 from the registry.
      tasks.get(task_id);
      return ok({ task_id, last_seq: 0, next_after_seq: null, items: [] });
    },
  );

  app.post(
    '/api/events/:event_id/redeliver',
    {
      config: { refusals: ['EVENT_NOT_FOUND', 'NO_RECEIVER'] },
      schema: {
        tags: ['events'],
        summary: 'Extension: send a stored event again now, from the start of its backoff',
        params: EventParams,
        response: { 200: Envelope(DeliveryRecord) },
      },
    },
    async (request) => ok(outbox.redeliver(request.params.event_id)),
  );

  app.get(
    '/api/events/backlog',
    {
      schema: {
        tags: ['events'],
        summary: 'Extension: what the outbox holds, by delivery state, and its snapshot bytes',
        response: { 200: Envelope(Backlog) },
      },
    },
    async () => {
      const status = mqtt.status();
      const view = mqtt.view();
      return ok({
        ...outbox.backlog(),
        held_events: held.held.events,
        held_bytes: held.held.bytes,
        lost_events: held.lost,
        unrecorded_attempts: delivery.unrecordedAttempts,
        mqtt: { enabled: view.enabled, connected: status.connected, backlog: status.backlog },
      });
    },
  );

  app.get(
    '/api/events/stream',
    {
      exposeHeadRoute: false,
      config: { queryToken: true, answers: ['text/event-stream'], refusals: ['FEEDS_BUSY'] },
      schema: {
        tags: ['events'],
        summary: `Extension: live feed (text/event-stream) of stored events and delivery changes; token in Authorization or ?token=; Last-Event-ID replays up to ${REPLAY_LIMIT} events`,
        querystring: StreamQuery,
      },
    },
    async (request, reply) => {
      const header = Number(request.headers['last-event-id']);
      const afterId = Number.isSafeInteger(header) && header >= 0 ? header : request.query.last_event_id;
      if (feeds.full) {
        throw new ApiError(
          'FEEDS_BUSY',
          `${MAX_FEEDS} event feeds are open already, the most the engine serves; retry later`,
          { 'retry-after': String(FEEDS_RETRY_AFTER_S) },
        );
      }
      // The feed lasts as long as its token: signing out or a password change ends it.
      let end = () => {};
      const release = holdToken(accounts, request, () => end());
      if (!release) throw tokenEnded();
      reply.hijack();
      end = feeds.serve(reply.raw, { taskId: request.query.task_id, afterId });
      reply.raw.once('close', release);
    },
  );

  app.get(
    '/api/settings/mqtt',
    {
      schema: {
        tags: ['settings'],
        summary: 'Extension: the MQTT publisher settings and connection state (the password is never shown)',
        response: { 200: Envelope(MqttSettingsView) },
      },
    },
    async () => ok(mqtt.view()),
  );

  app.put(
    '/api/settings/mqtt',
    {
      schema: {
        tags: ['settings'],
        summary: 'Extension: change the MQTT publisher settings (omitted fields are kept) and reconnect',
        body: MqttSettingsBody,
        response: { 200: Envelope(MqttSettingsView) },
      },
    },
    async (request) => ok(await mqtt.configure(request.body)),
  );

  app.post(
    '/api/settings/mqtt/test',
    {
      schema: {
        tags: ['settings'],
        summary: `Extension: connect once to the broker with the stored settings and the body applied (nothing is saved) and say how it went; at most ${MQTT_TEST_TIMEOUT_MS / 1000} s`,
        body: MqttSettingsBody,
        response: { 200: Envelope(MqttTestResult) },
      },
    },
    async (request) => ok(await mqtt.test(request.body)),
  );

  app.get(
    '/api/settings/callbacks',
    {
      schema: {
        tags: ['settings'],
        summary: 'Extension: the site-wide callback URL of tasks that have no report_url of their own',
        response: { 200: Envelope(CallbackSettings) },
      },
    },
    async () => ok(receiver.view()),
  );

  app.put(
    '/api/settings/callbacks',
    {
      schema: {
        tags: ['settings'],
        summary:
          'Extension: set the site-wide callback URL ("" for none); the next event of a task without a report_url goes there',
        body: CallbackSettings,
        response: { 200: Envelope(CallbackSettings) },
      },
    },
    async (request) => {
      const url = checkReportUrl(request.body.default_report_url, 'default_report_url');
      return ok(receiver.save({ default_report_url: url }));
    },
  );
};
