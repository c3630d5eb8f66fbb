import { type Static, Type } from '@sinclair/typebox';
import { oneOf } from '../schema/ajv';
import { CallbackBody } from './schema';

/**
 * pending: waiting for (another) attempt; delivered: a 2xx answer acknowledged it; dead: retried for
 * 24 h without success, kept visible; no_receiver: the task has no report_url, stored for the console,
 * MQTT and the events endpoint only.
 */
export const DeliveryState = oneOf(['pending', 'delivered', 'dead', 'no_receiver']);
export type DeliveryState = Static<typeof DeliveryState>;

const Nullable = <T extends ReturnType<typeof Type.Integer> | ReturnType<typeof Type.String>>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/** One stored event's delivery state, as the events endpoint, the SSE feed and the bus show it. */
export const DeliveryRecord = Type.Object({
  event_id: Type.String(),
  task_id: Type.String(),
  seq: Type.Integer({ minimum: 1 }),
  event: Type.String({ description: 'message, task_closed, stream_lost or stream_restored' }),
  app_id: Type.String(),
  timestamp: Type.Integer({ description: 'The event time, ms since the Unix epoch' }),
  created_at: Type.Integer({ description: 'When the outbox stored it, ms since the Unix epoch' }),
  state: DeliveryState,
  attempts: Type.Integer({
    minimum: 0,
    description: 'HTTP attempts since it was stored or last redelivered',
  }),
  next_attempt_at: Nullable(Type.Integer({ description: 'Set while pending' })),
  deadline_at: Type.Integer({ description: 'After this the event is marked dead instead of retried' }),
  delivered_at: Nullable(Type.Integer()),
  http_status: Nullable(Type.Integer({ description: 'Status of the last answer; null when none came' })),
  answer_code: Nullable(Type.Integer({ description: 'code of the last JSON answer' })),
  answer_msg: Nullable(Type.String({ description: 'msg of the last JSON answer' })),
  last_error: Nullable(
    Type.String({ description: 'Why the last attempt failed (status, timeout, refused)' }),
  ),
  image_dropped: Type.Boolean({
    description: 'The outbox size bound replaced the snapshots (rules[].image) of this event with ""',
  }),
});
export type DeliveryRecord = Static<typeof DeliveryRecord>;

/** An item of the events listing: the record, and the body when asked for (with_body=true). */
export const EventItem = Type.Object({ ...DeliveryRecord.properties, body: Type.Optional(CallbackBody) });
export type EventItem = Static<typeof EventItem>;
