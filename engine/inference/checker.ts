import { DomainError } from '../domain-error';
import { HostFailure, type HostLimits, InferenceHost } from './host';
import type { CheckReply, OnnxModelRef } from './protocol';

/** Why a model check is refused; engine/api/domain-errors.ts maps it to its envelope code. */
export type CheckErrorKind = 'model.checks_busy';

/** Too many installs already wait for their model check: the caller may try again shortly. */
export class ChecksBusyError extends DomainError<CheckErrorKind> {
  override name = 'ChecksBusyError';

  constructor(message: string) {
    super('model.checks_busy', message);
  }
}

/** The install that asked for a check went away (its client disconnected): the check was dropped. */
export class CheckCancelledError extends Error {
  override name = 'CheckCancelledError';
}

export interface CheckLimits {
  /** Longest one check may take, process start and model load included, in ms. */
  deadlineMs: number;
  /** Most checks waiting for the one running; one more is refused with ChecksBusyError. */
  maxWaiting: number;
}

const closedError = () => new Error('the inference pool is closed');
const cancelledError = () =>
  new CheckCancelledError('the install was abandoned: its model check was cancelled');

/**
 * Checks the models of packages being installed, each in a short-lived host process of its own
 * (never on the hosts that serve tasks), one at a time under the check deadline and the memory
 * bound. A check that overruns is killed and answered as the model's problem, so the install is
 * refused like any invalid model and answers in bounded time.
 */
export class ModelChecker {
  private running = false;
  private readonly waiting: Array<{ start: () => void; cancel: (error: Error) => void }> = [];
  private current: InferenceHost | null = null;
  private closed = false;
  private nextId = 1;

  constructor(
    private readonly hostLimits: HostLimits,
    private readonly limits: CheckLimits,
  ) {}

  /**
   * The model's problem in plain words, or null when it fits its manifest entry and labels. When
   * `signal` aborts, a waiting check leaves the queue and a running one has its process killed:
   * either rejects with CheckCancelledError and the next install's check goes ahead.
   */
  async check(model: OnnxModelRef, labels: number, signal?: AbortSignal): Promise<string | null> {
    if (signal?.aborted) throw cancelledError();
    await this.turn(signal);
    try {
      return await this.run(model, labels, signal);
    } finally {
      this.next();
    }
  }

  /** Kills a check in flight (it fails as closed) and refuses those waiting. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter.cancel(closedError());
    await this.current?.close(0);
  }

  private turn(signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    if (!this.running) {
      this.running = true;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.maxWaiting) {
      return Promise.reject(
        new ChecksBusyError(
          `${this.waiting.length + 1} package installs are already checking their models; try again shortly`,
        ),
      );
    }
    return new Promise((start, cancel) => {
      const waiter = {
        start: () => {
          signal?.removeEventListener('abort', leave);
          start();
        },
        cancel,
      };
      // An abandoned install gives its place in the queue back at once.
      const leave = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        cancel(cancelledError());
      };
      signal?.addEventListener('abort', leave, { once: true });
      this.waiting.push(waiter);
    });
  }

  private next(): void {
    const waiter = this.waiting.shift();
    if (waiter) waiter.start();
    else this.running = false;
  }

  private async run(model: OnnxModelRef, labels: number, signal?: AbortSignal): Promise<string | null> {
    if (this.closed) throw closedError();
    if (signal?.aborted) throw cancelledError();
    const host = new InferenceHost(this.hostLimits);
    this.current = host;
    // An abandoned install's check is killed like one at engine shutdown, and fails as cancelled.
    const kill = () => void host.close(0);
    signal?.addEventListener('abort', kill, { once: true });
    try {
      const request = { id: this.nextId++, kind: 'check' as const, model, labels };
      const reply = (await host.run(request, null, this.limits.deadlineMs)) as CheckReply;
      if (signal?.aborted) throw cancelledError();
      return reply.problem;
    } catch (error) {
      if (signal?.aborted) throw cancelledError();
      if (!(error instanceof HostFailure)) throw error;
      if (error.failure === 'closed') throw closedError();
      // Not the model's fault: the install fails as an engine error, not as an invalid package.
      if (error.failure === 'unavailable')
        throw new Error(`the model check could not start: ${error.message}`);
      return this.problemOf(error);
    } finally {
      signal?.removeEventListener('abort', kill);
      this.current = null;
      await host.close(0);
    }
  }

  private problemOf(failure: HostFailure): string {
    switch (failure.failure) {
      case 'time':
        return `did not finish its check within ${this.limits.deadlineMs / 1000} s`;
      case 'memory':
        return `needed more than ${this.hostLimits.memoryLimitMb} MB of memory`;
      default:
        return `crashed the process checking it (${failure.message})`;
    }
  }
}
