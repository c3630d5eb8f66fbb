import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord, EventItem } from '../engine/events/delivery';
import type { EngineOptions } from '../engine/index';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { message, nextDelivery, Receiver, range } from './helpers/receiver';

/**
 * The outbox's bounds, each on an engine of its own: retrying stops after 24 h (dead, still listed,
 * redeliverable), the snapshot size bound drops images but never events, and one receiver that is
 * slow or hangs does not hold up the deliveries of other tasks.
 */

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function engine(delivery: EngineOptions['delivery']): Promise<TestEngine> {
  const t = await startTestEngine(undefined, undefined, { delivery });
  cleanup.push(() => t.stop());
  return t;
}

async function receiver(): Promise<Receiver> {
  const rx = await Receiver.start();
  cleanup.push(() => rx.close());
  return rx;
}

async function listed(t: TestEngine, taskId: string, query = ''): Promise<EventItem[]> {
  const answer = await t.call('GET', `/api/task/${taskId}/events${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body.data as { items: EventItem[] }).items;
}

/** Lets the clock reach each next attempt of a failing event (never over 5 min away) until it is no longer pending. */
async function untilSettled(t: TestEngine, from: DeliveryRecord) {
  const waits: number[] = [];
  let record = from;
  while (record.state === 'pending') {
    const due = (record.next_attempt_at ?? 0) - t.clock.now();
    waits.push(due);
    const next = nextDelivery(t.engine.bus, (r) => r.event_id === from.event_id);
    t.advance(due);
    record = await next;
  }
  return { record, waits };
}

describe('retry period', () => {
  it('retries with backoff (1 s doubling to 5 min) for 24 h, then marks the event dead and keeps it', async () => {
    const t = await engine({});
    const rx = await receiver();
    rx.mode = { kind: 'status', status: 503 };
    const task = randomUUID();
    const start = t.clock.now();
    const [first, second] = [1, 2].map((i) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: rx.url }, message(task, i)),
    );
    if (!first || !second) throw new Error('not enqueued');

    const firstTry = nextDelivery(t.engine.bus, (r) => r.event_id === first.event_id);
    const { record, waits } = await untilSettled(t, await firstTry);
    expect(record).toMatchObject({
      state: 'dead',
      http_status: 503,
      last_error: 'the receiver answered HTTP 503',
    });
    // Backoff: 1 s, 2 s, 4 s ... with +-20 % jitter, capped at 5 min.
    for (const [i, wait] of waits.slice(0, 8).entries()) {
      expect(wait).toBeGreaterThanOrEqual(0.8 * 1000 * 2 ** i);
      expect(wait).toBeLessThanOrEqual(1.2 * 1000 * 2 ** i);
    }
    expect(Math.max(...waits)).toBeLessThanOrEqual(5 * 60_000);
    expect(waits.slice(12).every((w) => w >= 0.8 * 5 * 60_000)).toBe(true);
    const elapsed = t.clock.now() - start;
    expect(elapsed).toBeLessThanOrEqual(24 * 3600_000);
    expect(elapsed).toBeGreaterThan(24 * 3600_000 - 5 * 60_000);
    expect(record.attempts).toBe(waits.length + 1);
    // Only the head was ever tried while it failed.
    expect(rx.requests.every((r) => r.seq === 1)).toBe(true);

    // The next event went out only now, and is retried until its own deadline, a few minutes on.
    const secondTry = await nextDelivery(t.engine.bus, (r) => r.event_id === second.event_id);
    expect(secondTry).toMatchObject({ attempts: 1, state: 'pending' });
    const settled = await untilSettled(t, secondTry);
    expect(settled.record.state).toBe('dead');
    expect(t.clock.now() - start).toBeLessThanOrEqual(24 * 3600_000);
    expect((await listed(t, task)).map((e) => [e.seq, e.state])).toEqual([
      [1, 'dead'],
      [2, 'dead'],
    ]);

    // A dead event can be sent again by hand once the receiver is back.
    rx.mode = { kind: 'ok' };
    const answer = await t.call('POST', `/api/events/${first.event_id}/redeliver`);
    expect(answer.body.data).toMatchObject({ state: 'pending', attempts: 0 });
    await rx.waitFor('the redelivered event', () => rx.accepted.length === 1);
    expect(rx.accepted[0]?.event_id).toBe(first.event_id);
    expect((await listed(t, task)).map((e) => e.state)).toEqual(['delivered', 'dead']);
  });
});

describe('size bound', () => {
  it('drops the oldest snapshots, delivered ones first, then pending ones; never an event', async () => {
    const t = await engine({ imageLimitBytes: 10_000 });
    const ok = await receiver();
    const failing = await receiver();
    failing.mode = { kind: 'status', status: 500 };
    const [pendingTask, deliveredTask] = [randomUUID(), randomUUID()];
    const enqueue = (task: string, to: Receiver, i: number) =>
      t.engine.outbox.enqueue({ task_id: task, report_url: to.url }, message(task, i, 4000));
    const delivered = async (n: number) => ok.waitFor(`${n} delivered`, () => ok.accepted.length === n);

    enqueue(pendingTask, failing, 1); // 4000 bytes, stays pending
    enqueue(deliveredTask, ok, 1); // 8000
    await delivered(1);
    enqueue(deliveredTask, ok, 2); // 12000: the delivered D1 loses its image
    await delivered(2);
    enqueue(pendingTask, failing, 2); // 12000: the delivered D2 goes
    enqueue(pendingTask, failing, 3); // 12000: nothing delivered is left with an image: the oldest pending P1 goes

    const p = await listed(t, pendingTask, '?with_body=true');
    const d = await listed(t, deliveredTask, '?with_body=true');
    expect(p.map((e) => [e.seq, e.state, e.image_dropped])).toEqual([
      [1, 'pending', true],
      [2, 'pending', false],
      [3, 'pending', false],
    ]);
    expect(d.map((e) => [e.seq, e.state, e.image_dropped])).toEqual([
      [1, 'delivered', true],
      [2, 'delivered', true],
    ]);
    const images = (e: EventItem) =>
      e.body?.event === 'message' ? e.body.data.rules.map((r) => r.image.length) : [];
    expect(p.map(images)).toEqual([[0], [4000], [4000]]);
    expect(d.map(images)).toEqual([[0], [0]]);
    // The rest of the body is untouched.
    expect(p[0]?.body?.data).toMatchObject({ frame: { id: 1 }, rules: [{ objects: [{ track_id: '1' }] }] });
    expect((await t.call('GET', '/api/events/backlog')).body.data).toMatchObject({
      image_bytes: 8000,
      image_limit_bytes: 10_000,
      images_dropped: 3,
      pending: 3,
      delivered: 2,
    });

    // The event whose snapshot went is still delivered, in order, with an empty image.
    failing.mode = { kind: 'ok' };
    t.advance(5 * 60_000);
    await failing.waitFor('the pending three', () => failing.accepted.length === 3);
    expect(failing.accepted.map((r) => r.seq)).toEqual([1, 2, 3]);
    const head = failing.accepted[0]?.body;
    expect(head?.event === 'message' && head.data.rules[0]?.image).toBe('');
  });
});

describe('isolation between receivers', () => {
  it('a slow receiver does not slow another task’s deliveries', async () => {
    const t = await engine({});
    const slow = await receiver();
    const fast = await receiver();
    slow.mode = { kind: 'slow', ms: 2000 };
    const [slowTask, fastTask] = [randomUUID(), randomUUID()];
    for (const i of range(1, 2))
      t.engine.outbox.enqueue({ task_id: slowTask, report_url: slow.url }, message(slowTask, i));
    for (const i of range(1, 40))
      t.engine.outbox.enqueue({ task_id: fastTask, report_url: fast.url }, message(fastTask, i));
    await fast.waitFor('the fast task’s 40 events', () => fast.accepted.length === 40);
    expect(fast.accepted.map((r) => r.seq)).toEqual(range(1, 40));
    // Meanwhile the slow receiver still sits on the first event of its task.
    expect(slow.requests.map((r) => [r.seq, r.outcome])).toEqual([[1, 'hung']]);
    await slow.waitFor('the slow task’s 2 events', () => slow.accepted.length === 2);
    expect(slow.accepted.map((r) => r.seq)).toEqual([1, 2]);
  });

  it('tasks stuck on a hanging receiver hold at most perReceiver slots; other receivers get the rest', async () => {
    const t = await engine({ concurrency: 4, perReceiver: 2, requestTimeoutMs: 30_000 });
    const hanging = await receiver();
    const fast = await receiver();
    // It answers once first: a receiver that never answered gets one request at a time (delivery-stall).
    const first = randomUUID();
    t.engine.outbox.enqueue({ task_id: first, report_url: hanging.url }, message(first, 1));
    await hanging.waitFor('the first answer', () => hanging.accepted.length === 1);
    hanging.mode = { kind: 'hang' };
    const stuck = range(1, 6).map(() => randomUUID());
    for (const task of stuck)
      t.engine.outbox.enqueue({ task_id: task, report_url: hanging.url }, message(task, 1));
    await hanging.waitFor('two hung requests', () => hanging.requests.length === 3);
    const tasks = range(1, 5).map(() => randomUUID());
    for (const task of tasks)
      for (const i of range(1, 10))
        t.engine.outbox.enqueue({ task_id: task, report_url: fast.url }, message(task, i));
    await fast.waitFor('50 events of 5 tasks', () => fast.accepted.length === 50);
    for (const task of tasks)
      expect(fast.accepted.filter((r) => r.task_id === task).map((r) => r.seq)).toEqual(range(1, 10));
    expect(hanging.requests.map((r) => r.outcome)).toEqual([200, 'hung', 'hung']);
  });
});
