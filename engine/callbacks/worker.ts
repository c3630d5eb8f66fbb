import type { Agent } from 'undici';
import type { Clock, TimerHandle } from '../clock';
import type { EventBus } from '../events/bus';
import { DISK_RETRY_MS, SpaceWaiter } from '../store/disk-full';
import { retryDelayMs } from './backoff';
import type { Outbox } from './outbox';
import { callbackAgent, postCallback } from './post';

export interface DeliveryOptions {
  /** Per-request limit, answer included: a hanging receiver costs at most this per attempt. */
  requestTimeoutMs: number;
  /** Requests in flight over all tasks. */
  concurrency: number;
  /** Requests in flight to one receiver (scheme://host:port): a stuck receiver cannot take every slot. */
  perReceiver: number;
  /**
   * Requests in flight, together, to receivers that have not answered their last attempt (or not
   * been tried since the start): each of those gets one request at a time, and all of them no more
   * than this, so receivers that hang leave the other slots to those that answer.
   */
  unprovenConcurrency: number;
  /** How often outcomes that a full disk kept from being recorded are tried again. */
  diskRetryMs: number;
}

export const DELIVERY_DEFAULTS: DeliveryOptions = {
  requestTimeoutMs: 10_000,
  concurrency: 32,
  perReceiver: 8,
  unprovenConcurrency: 8,
  diskRetryMs: DISK_RETRY_MS,
};

/**
 * idle: nothing scheduled; sleeping: its head waits for its backoff; waiting: for a free slot;
 * sending: in flight; held: its last outcome waits for disk space to be recorded.
 */
interface Lane {
  state: 'idle' | 'sleeping' | 'waiting' | 'sending' | 'held';
  timer?: TimerHandle;
  receiver: string;
}

/**
 * Sends the outbox's pending events, in seq order per task: one request in flight per task, so an
 * event goes only after the one before it was acknowledged (or died). Tasks do not wait for each
 * other beyond the shared limits on concurrent requests. Backoff timers run on the injected Clock.
 * When the data disk is full, an outcome that cannot be recorded is kept and tried again, and no
 * new attempt starts until every kept one is recorded: an attempt made meanwhile could not be
 * recorded either and would only go out again.
 */
export class DeliveryWorker {
  readonly options: DeliveryOptions;
  private readonly lanes = new Map<string, Lane>();
  /** Lanes waiting for a slot, in the order they asked. */
  private readonly queue: string[] = [];
  private readonly activeByReceiver = new Map<string, number>();
  /** Receivers whose last finished attempt got an HTTP answer (any status). */
  private readonly proven = new Set<string>();
  private active = 0;
  private stopped = true;
  /**
   * Whether an event may go out now. A cluster node sends only what its task's chain holds (a node
   * that lost the task meanwhile must not send what the new owner numbers anew); it kicks the task
   * when more is appended. A single workstation sends everything.
   */
  gate: (taskId: string, seq: number) => boolean = () => true;
  private abort = new AbortController();
  private agent?: Agent;
  /** Recordings of outcomes that a full disk refused, by task, in the order they came. */
  private readonly unrecorded: SpaceWaiter;

  constructor(
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly bus: EventBus,
    options: Partial<DeliveryOptions> = {},
  ) {
    this.options = { ...DELIVERY_DEFAULTS, ...options };
    this.unrecorded = new SpaceWaiter(
      clock,
      (error) => {
        throw error;
      },
      this.options.diskRetryMs,
      // Once its outcome is in, the task's delivery goes on where it stopped.
      (taskId) => {
        const lane = this.lanes.get(taskId);
        if (lane) lane.state = 'idle';
        this.kick(taskId);
        this.fillSlots();
      },
    );
  }

  private readonly onEvent = (event: { delivery: { state: string; task_id: string } }) => {
    if (event.delivery.state === 'pending') this.kick(event.delivery.task_id);
  };
  private readonly onDelivery = (record: { state: string; task_id: string }) => {
    if (record.state === 'pending') this.kick(record.task_id);
  };

  /** Picks up what was pending when the engine stopped (in-flight attempts included) and listens for more. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.abort = new AbortController();
    this.agent = callbackAgent({
      timeoutMs: this.options.requestTimeoutMs,
      perReceiver: this.options.perReceiver,
    });
    this.bus.on('event', this.onEvent);
    this.bus.on('delivery', this.onDelivery);
    for (const taskId of this.outbox.pendingTasks()) this.kick(taskId);
  }

  /** Stops sending; attempts in flight are abandoned unrecorded and go out again after a restart. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.bus.off('event', this.onEvent);
    this.bus.off('delivery', this.onDelivery);
    this.abort.abort();
    void this.agent?.destroy();
    this.agent = undefined;
    for (const lane of this.lanes.values()) if (lane.timer) this.clock.clearTimeout(lane.timer);
    this.lanes.clear();
    this.queue.length = 0;
    this.activeByReceiver.clear();
    this.proven.clear();
    this.active = 0;
    this.unrecorded.close();
  }

  /** Attempts whose outcome waits for disk space to be recorded; no attempt starts while there are any. */
  get unrecordedAttempts(): number {
    return this.unrecorded.size;
  }

  /** Looks at the task's next pending event now (new event, redelivery, or backoff over). */
  kick(taskId: string): void {
    if (this.stopped) return;
    let lane = this.lanes.get(taskId);
    if (!lane) {
      lane = { state: 'idle', receiver: '' };
      this.lanes.set(taskId, lane);
    }
    // A request in flight or a place in the queue re-reads the head when its turn comes.
    if (lane.state === 'waiting' || lane.state === 'sending' || lane.state === 'held') return;
    if (lane.timer) this.clock.clearTimeout(lane.timer);
    lane.timer = undefined;
    const head = this.outbox.head(taskId);
    if (!head || !this.gate(taskId, head.seq)) {
      this.lanes.delete(taskId);
      return;
    }
    const wait = head.next_attempt_at - this.clock.now();
    if (wait > 0) {
      lane.state = 'sleeping';
      lane.timer = this.clock.setTimeout(() => {
        lane.timer = undefined;
        lane.state = 'idle';
        this.kick(taskId);
      }, wait);
      return;
    }
    lane.state = 'waiting';
    lane.receiver = receiverOf(head.report_url);
    this.queue.push(taskId);
    this.fillSlots();
  }

  private fillSlots(): void {
    if (this.unrecorded.size > 0) return;
    let unproven = 0;
    for (const [receiver, n] of this.activeByReceiver) if (!this.proven.has(receiver)) unproven += n;
    for (let i = 0; i < this.queue.length && this.active < this.options.concurrency; ) {
      const taskId = this.queue[i] as string;
      const lane = this.lanes.get(taskId);
      if (lane && !this.hasSlotFor(lane.receiver, unproven)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      if (!lane) continue;
      if (!this.proven.has(lane.receiver)) unproven++;
      void this.send(taskId, lane);
    }
  }

  private hasSlotFor(receiver: string, unproven: number): boolean {
    const active = this.activeByReceiver.get(receiver) ?? 0;
    if (this.proven.has(receiver)) return active < this.options.perReceiver;
    return active < 1 && unproven < this.options.unprovenConcurrency;
  }

  private async send(taskId: string, lane: Lane): Promise<void> {
    lane.state = 'sending';
    const receiver = lane.receiver;
    this.active++;
    this.activeByReceiver.set(receiver, (this.activeByReceiver.get(receiver) ?? 0) + 1);
    // Read again: a redelivery may have put an earlier seq first while the lane waited.
    const head = this.outbox.head(taskId);
    let recorded = true;
    if (head && head.next_attempt_at <= this.clock.now() && this.agent) {
      const stop = this.abort.signal;
      const outcome = await postCallback({
        url: head.report_url,
        json: head.json,
        secret: head.report_secret,
        now: this.clock.now(),
        timeoutMs: this.options.requestTimeoutMs,
        stop,
        dispatcher: this.agent,
      });
      if (stop.aborted) return;
      if (outcome.http_status === null) this.proven.delete(receiver);
      else this.proven.add(receiver);
      const nextAttemptAt = this.clock.now() + retryDelayMs(head.attempts + 1);
      recorded = this.unrecorded.write(taskId, () => this.outbox.recordAttempt(head, outcome, nextAttemptAt));
    }
    this.active--;
    this.activeByReceiver.set(receiver, (this.activeByReceiver.get(receiver) ?? 1) - 1);
    lane.state = recorded ? 'idle' : 'held';
    this.kick(taskId);
    this.fillSlots();
  }
}

function receiverOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
