import type { Clock, TimerHandle } from '../clock';
import type { NewEvent } from '../events/schema';
import { DISK_RETRY_MS, isDiskFull } from '../store/disk-full';
import type { ReportTarget } from './outbox';

export interface HeldEventsOptions {
  /**
   * Events (as JSON, snapshots included) kept in memory while the data disk is full. An event that
   * does not fit is lost, and counted.
   */
  heldLimitBytes: number;
  /** How often the held events are tried again. */
  diskRetryMs: number;
}

export const HELD_EVENTS_DEFAULTS: HeldEventsOptions = {
  heldLimitBytes: 64 * 1024 * 1024,
  diskRetryMs: DISK_RETRY_MS,
};

interface Held {
  target: ReportTarget;
  event: NewEvent;
  bytes: number;
}

/**
 * Where the analysis and the task lifecycle hand their events to the outbox. While the data disk
 * is full, events wait here in memory, in the order they came, and are stored (taking their seq
 * then) once there is room again; the analysis never sees the failure and never waits. Later events
 * queue behind held ones, so the order per task holds. The hold is bounded: what does not fit is
 * lost, counted in `lost`.
 */
export class HeldEvents {
  readonly options: HeldEventsOptions;
  /** Events that could not be stored: the disk was full and the hold too. */
  lost = 0;
  private readonly queue: Held[] = [];
  private bytes = 0;
  private timer?: TimerHandle;
  /**
   * Cluster mode: whether a task's output is fenced here (engine/cluster: it warms up on this node
   * before a planned move, and its owner still reports what it sees): its events are not stored.
   */
  fenced: (taskId: string) => boolean = () => false;

  constructor(
    private readonly outbox: { enqueue(target: ReportTarget, event: NewEvent): unknown },
    private readonly clock: Clock,
    options: Partial<HeldEventsOptions> = {},
    /** A held event that the outbox refused for another reason than space; it is dropped. */
    private readonly onError: (error: unknown, taskId: string) => void = () => {},
  ) {
    this.options = { ...HELD_EVENTS_DEFAULTS, ...options };
  }

  /** Stores the event now or, on a full disk, holds it. Other errors (an invalid event) are thrown. */
  enqueue(target: ReportTarget, event: NewEvent): void {
    if (this.fenced(event.task_id)) return;
    if (this.queue.length === 0) {
      try {
        this.outbox.enqueue(target, event);
        return;
      } catch (error) {
        if (!isDiskFull(error)) throw error;
      }
    }
    const bytes = Buffer.byteLength(JSON.stringify(event));
    if (this.bytes + bytes > this.options.heldLimitBytes) {
      this.lost += 1;
      return;
    }
    this.queue.push({ target, event, bytes });
    this.bytes += bytes;
    this.timer ??= this.clock.setTimeout(() => this.flush(), this.options.diskRetryMs);
  }

  /** Events waiting in memory for disk space, and their bytes. */
  get held(): { events: number; bytes: number } {
    return { events: this.queue.length, bytes: this.bytes };
  }

  /**
   * Takes a task's held events out of the hold, in order (cluster mode: the task moves to another
   * node, which stores them there).
   */
  take(taskId: string): Array<{ target: ReportTarget; event: NewEvent }> {
    const taken = this.queue.filter((held) => held.target.task_id === taskId);
    if (taken.length === 0) return [];
    this.queue.splice(0, this.queue.length, ...this.queue.filter((held) => held.target.task_id !== taskId));
    for (const held of taken) this.bytes -= held.bytes;
    return taken.map(({ target, event }) => ({ target, event }));
  }

  /** Stores what it can one last time and stops; events still held are lost (and counted). Returns how many. */
  close(): number {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.flush();
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const dropped = this.queue.length;
    this.lost += dropped;
    this.queue.length = 0;
    this.bytes = 0;
    return dropped;
  }

  private flush(): void {
    this.timer = undefined;
    for (let next = this.queue[0]; next; next = this.queue[0]) {
      try {
        this.outbox.enqueue(next.target, next.event);
      } catch (error) {
        if (isDiskFull(error)) {
          this.timer = this.clock.setTimeout(() => this.flush(), this.options.diskRetryMs);
          return;
        }
        this.onError(error, next.event.task_id);
      }
      this.queue.shift();
      this.bytes -= next.bytes;
    }
  }
}
