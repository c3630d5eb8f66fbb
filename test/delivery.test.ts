import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../engine/contract/errors';
import type { DeliveryRecord, EventItem } from '../engine/events/delivery';
import { CallbackBody, type NewEvent } from '../engine/events/schema';
import { compileCheck } from '../engine/schema/ajv';
import { type Answer, startTestEngine, type TestEngine } from './helpers/engine';
import { message, nextDelivery, Receiver, range } from './helpers/receiver';

/**
 * Callback delivery from the durable outbox to a real receiver on loopback: order, retries through
 * failures and a hanging receiver, the recorded answers, the events endpoint and redelivery,
 * signatures, and task closure delivered like any event. Backoff runs on the engine's ManualClock.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const checkBody = compileCheck<CallbackBody>(CallbackBody, 'body');
const FIVE_MIN = 5 * 60_000;
let t: TestEngine;
let rx: Receiver;

beforeAll(async () => {
  t = await startTestEngine(undefined, undefined, { delivery: { requestTimeoutMs: 500 } });
  rx = await Receiver.start();
});
afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

function expectOk(answer: Answer): unknown {
  expect(answer.body.msg, JSON.stringify(answer.body)).toBe('success');
  expect(answer.status).toBe(200);
  return answer.body.data;
}

function expectError(answer: Answer, kind: keyof typeof ERRORS, msgPart?: RegExp) {
  expect({ status: answer.status, code: answer.body.code }).toEqual({
    status: ERRORS[kind].status,
    code: ERRORS[kind].code,
  });
  if (msgPart) expect(answer.body.msg).toMatch(msgPart);
}

async function events(
  taskId: string,
  query = '',
): Promise<{ items: EventItem[]; next_after_seq: number | null; last_seq: number }> {
  return expectOk(await t.call('GET', `/api/task/${taskId}/events${query}`)) as {
    items: EventItem[];
    next_after_seq: number | null;
    last_seq: number;
  };
}

/** Moves the clock past the next backoff and waits until the resulting attempt is recorded. */
async function retry(eventId: string): Promise<DeliveryRecord> {
  const recorded = nextDelivery(t.engine.bus, (r) => r.event_id === eventId && r.attempts > 0);
  t.advance(FIVE_MIN);
  return recorded;
}

describe('delivery to report_url', () => {
  it('delivers every event exactly once and in order through 500s, a hanging receiver and recovery', async () => {
    const task = randomUUID();
    rx.mode = { kind: 'status', status: 500 };
    const firstFailure = nextDelivery(t.engine.bus, (r) => r.task_id === task && r.attempts === 1);
    const bodies = range(1, 12).map((i) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, message(task, i)),
    );
    expect(bodies.map((b) => b.seq)).toEqual(range(1, 12));
    const head = bodies[0] as CallbackBody;

    expect(await firstFailure).toMatchObject({
      seq: 1,
      state: 'pending',
      http_status: 500,
      answer_code: 500,
    });
    for (let i = 0; i < 3; i++) await retry(head.event_id);
    rx.mode = { kind: 'hang' };
    const timedOut = await retry(head.event_id);
    expect(timedOut).toMatchObject({ state: 'pending', attempts: 5, http_status: null });
    expect(timedOut.last_error).toMatch(/no answer within 500 ms/);
    // Nothing after the head is sent while the head fails: order per task.
    expect(new Set(rx.requests.filter((r) => r.task_id === task).map((r) => r.seq))).toEqual(new Set([1]));

    rx.mode = { kind: 'ok' };
    t.advance(FIVE_MIN);
    await rx.waitFor('all 12 accepted', () => rx.accepted.filter((r) => r.task_id === task).length === 12);
    const accepted = rx.accepted.filter((r) => r.task_id === task);
    expect(accepted.map((r) => r.seq)).toEqual(range(1, 12));
    expect(accepted.map((r) => r.event_id)).toEqual(bodies.map((b) => b.event_id));
    for (const [i, request] of accepted.entries()) {
      expect(checkBody(request.body)).toEqual({ ok: true, value: request.body });
      expect(request.body).toEqual(bodies[i]);
      expect(request.headers?.['content-type']).toBe('application/json');
      expect(request.headers?.authorization).toBeUndefined();
      expect(request.headers?.['x-vision-signature']).toBeUndefined();
    }
    expect(new Set(bodies.map((b) => b.event_id)).size).toBe(12);
    for (const body of bodies) expect(body.event_id).toMatch(UUID);

    const listed = await events(task);
    expect(listed.items.map((e) => [e.seq, e.state])).toEqual(range(1, 12).map((s) => [s, 'delivered']));
    expect(listed.items[0]).toMatchObject({
      attempts: 6,
      http_status: 200,
      answer_code: 0,
      answer_msg: 'received',
      last_error: null,
      next_attempt_at: null,
    });
    expect(listed.items[1]).toMatchObject({ attempts: 1, http_status: 200 });
  });

  it('keeps seq gap-free per task, with tasks counting independently', () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const seqs = [a, b, a, a, b].map(
      (task, i) => t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, i)).seq,
    );
    expect(seqs).toEqual([1, 1, 2, 3, 2]);
  });

  it('refuses an event that breaks the callback schema, storing nothing', async () => {
    const task = randomUUID();
    // What a buggy analysis could hand over at run time: a message with no fired rule.
    const bad = {
      ...message(task, 1),
      data: { frame: { width: 1, height: 1, id: 1 }, rules: [] },
    } as unknown as NewEvent;
    expect(() => t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, bad)).toThrow(
      /invalid event: event\.data\.rules: must NOT have fewer than 1 items/,
    );
    expectError(await t.call('GET', `/api/task/${task}/events`), 'TASK_NOT_FOUND');
  });

  it('stores events of a task without report_url for the console only, with no HTTP attempt', async () => {
    const task = randomUUID();
    const before = rx.requests.length;
    const stored = t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, 1));
    t.advance(FIVE_MIN);
    const listed = await events(task);
    expect(listed.items).toHaveLength(1);
    expect(listed.items[0]).toMatchObject({ event_id: stored.event_id, state: 'no_receiver', attempts: 0 });
    expect(rx.requests.length).toBe(before);
    expectError(
      await t.call('POST', `/api/events/${stored.event_id}/redeliver`),
      'NO_RECEIVER',
      /has no report_url/,
    );
  });

  it('signs callbacks with HMAC-SHA256 of "t.body" when the task has a report_secret', async () => {
    const task = randomUUID();
    const secret = 'a-receiver-secret-0123456789';
    const body = t.engine.outbox.enqueue(
      { task_id: task, report_url: rx.url, report_secret: secret },
      message(task, 1),
    );
    await rx.waitFor('the signed callback', () => rx.accepted.some((r) => r.event_id === body.event_id));
    const request = rx.accepted.find((r) => r.event_id === body.event_id);
    const header = String(request?.headers?.['x-vision-signature']);
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
    expect(match, header).not.toBeNull();
    const [, stamp, mac] = match as RegExpExecArray;
    expect(Number(stamp)).toBe(t.clock.now());
    expect(createHmac('sha256', secret).update(`${stamp}.${request?.raw}`).digest('hex')).toBe(mac);
    expect(createHmac('sha256', 'another-secret').update(`${stamp}.${request?.raw}`).digest('hex')).not.toBe(
      mac,
    );
  });
});

describe('GET /api/task/{task_id}/events and POST /api/events/{event_id}/redeliver', () => {
  it('pages by seq, filters by state and returns the bodies when asked', async () => {
    const task = randomUUID();
    const bodies = range(1, 7).map((i) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, i)),
    );
    const first = await events(task, '?limit=3');
    expect(first.items.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(first).toMatchObject({ next_after_seq: 3, last_seq: 7 });
    expect(first.items[0]).not.toHaveProperty('body');
    const second = await events(task, '?limit=3&after_seq=3&with_body=true');
    expect(second.items.map((e) => e.body)).toEqual(bodies.slice(3, 6));
    const last = await events(task, '?limit=3&after_seq=6');
    expect(last.items.map((e) => e.seq)).toEqual([7]);
    expect(last.next_after_seq).toBeNull();
    expect((await events(task, '?state=no_receiver&limit=500')).items).toHaveLength(7);
    expect((await events(task, '?state=pending')).items).toEqual([]);
  });

  it('refuses bad queries and unknown tasks or events, changing nothing', async () => {
    const task = randomUUID();
    t.engine.outbox.enqueue({ task_id: task, report_url: '' }, message(task, 1));
    expectError(await t.call('GET', `/api/task/${task}/events?limit=0`), 'INVALID_PARAMETER', /query\.limit/);
    expectError(
      await t.call('GET', `/api/task/${task}/events?limit=501`),
      'INVALID_PARAMETER',
      /query\.limit/,
    );
    expectError(
      await t.call('GET', `/api/task/${task}/events?state=lost`),
      'INVALID_PARAMETER',
      /query\.state: must be one of \["pending","delivered","dead","no_receiver"\]/,
    );
    expectError(await t.call('GET', `/api/task/${task}/events?page=2`), 'INVALID_PARAMETER', /query\.page/);
    expectError(await t.call('GET', `/api/task/${randomUUID()}/events`), 'TASK_NOT_FOUND');
    expectError(
      await t.call('POST', `/api/events/${randomUUID()}/redeliver`),
      'EVENT_NOT_FOUND',
      /no stored event/,
    );
    expect((await events(task)).items).toHaveLength(1);
  });

  it('lists a running task without events as empty', async () => {
    const started = expectOk(
      await t.call('POST', '/api/task', { json: { mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] } }),
    ) as { task_id: string };
    expect(await events(started.task_id)).toEqual({
      task_id: started.task_id,
      last_seq: 0,
      next_after_seq: null,
      items: [],
    });
    expectOk(await t.call('DELETE', `/api/task/${started.task_id}`));
  });

  it('redelivers a delivered event: it goes out again with the same event_id and seq', async () => {
    const task = randomUUID();
    rx.mode = { kind: 'ok' };
    const body = t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, message(task, 1));
    await rx.waitFor(
      'first delivery',
      () => rx.accepted.filter((r) => r.event_id === body.event_id).length === 1,
    );
    const again = expectOk(await t.call('POST', `/api/events/${body.event_id}/redeliver`)) as DeliveryRecord;
    expect(again).toMatchObject({ event_id: body.event_id, seq: 1, attempts: 0, delivered_at: null });
    await rx.waitFor(
      'redelivery',
      () => rx.accepted.filter((r) => r.event_id === body.event_id).length === 2,
    );
    const copies = rx.accepted.filter((r) => r.event_id === body.event_id);
    expect(copies[1]?.raw).toBe(copies[0]?.raw);
    const listed = await events(task);
    expect(listed.items[0]).toMatchObject({ state: 'delivered', attempts: 1 });
  });
});

describe('task lifecycle events', () => {
  it('closing a task sends task_closed with its close_code, signed with the task’s report_secret', async () => {
    const secret = 'task-secret-0123456789abcdef';
    const started = expectOk(
      await t.call('POST', '/api/task', {
        json: {
          mode: 'image',
          zapk_id: 'builtin',
          app_ids: ['motion'],
          business_id: 'dock-7',
          report_url: rx.url,
          report_secret: secret,
        },
      }),
    ) as { task_id: string };
    const task = started.task_id;
    expectOk(await t.call('DELETE', `/api/task/${task}`));
    await rx.waitFor('task_closed', () => rx.accepted.some((r) => r.task_id === task));
    const request = rx.accepted.find((r) => r.task_id === task);
    expect(checkBody(request?.body).ok).toBe(true);
    expect(request?.body).toMatchObject({
      event: 'task_closed',
      task_id: task,
      app_id: '',
      business_id: 'dock-7',
      seq: 1,
      timestamp: t.clock.now(),
      data: { close_code: 1, status: 'closed', dump: 'closed by the caller' },
    });
    const [stamp, mac] = String(request?.headers?.['x-vision-signature'])
      .split(',')
      .map((p) => p.slice(p.indexOf('=') + 1));
    expect(createHmac('sha256', secret).update(`${stamp}.${request?.raw}`).digest('hex')).toBe(mac);
    expect((await events(task)).items.map((e) => [e.event, e.state])).toEqual([['task_closed', 'delivered']]);
  });

  it('an automatic close (no image for 5 min) is delivered with close_code 3', async () => {
    const started = expectOk(
      await t.call('POST', '/api/task', {
        json: { mode: 'image', zapk_id: 'builtin', app_ids: ['motion'], report_url: rx.url },
      }),
    ) as { task_id: string };
    t.advance(5 * 60_000 + 1);
    await rx.waitFor('task_closed', () => rx.accepted.some((r) => r.task_id === started.task_id));
    expect(rx.accepted.find((r) => r.task_id === started.task_id)?.body).toMatchObject({
      event: 'task_closed',
      seq: 1,
      data: { close_code: 3, status: 'closed' },
    });
  });
});

describe('GET /api/events/backlog', () => {
  it('counts the outbox by state', async () => {
    const task = randomUUID();
    const before = expectOk(await t.call('GET', '/api/events/backlog')) as Record<string, number>;
    rx.mode = { kind: 'status', status: 503 };
    const failed = nextDelivery(t.engine.bus, (r) => r.task_id === task && r.attempts === 1);
    t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, message(task, 1, 100));
    t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, message(task, 2, 100));
    await failed;
    const after = expectOk(await t.call('GET', '/api/events/backlog')) as Record<string, unknown>;
    expect(after).toMatchObject({
      pending: (before.pending ?? 0) + 2,
      tasks_pending: (before.tasks_pending ?? 0) + 1,
      image_bytes: (before.image_bytes ?? 0) + 200,
      image_limit_bytes: 512 * 1024 * 1024,
      images_dropped: 0,
      mqtt: { enabled: false, connected: false, backlog: 0 },
    });
    expect(after.oldest_pending_at).toBe(t.clock.now());
    rx.mode = { kind: 'ok' };
    t.advance(FIVE_MIN);
    await rx.waitFor('backlog drained', () => rx.accepted.filter((r) => r.task_id === task).length === 2);
  });
});
