import type { Clock, TimerHandle } from '../clock';

/** How long a preview or a push-less AI video may go unfetched before it is released. */
export const DEFAULT_IDLE_MS = 60_000;

/**
 * Calls onIdle once nothing touched it for idleMs on the engine's clock: a console that went away
 * without releasing its stream leaves nothing running. One timer at a time, re-armed lazily.
 */
export class IdleWatch {
  private lastSeenAt: number;
  private timer: TimerHandle | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly idleMs: number,
    private readonly onIdle: () => void,
  ) {
    this.lastSeenAt = clock.now();
    this.arm(idleMs);
  }

  touch(): void {
    this.lastSeenAt = this.clock.now();
  }

  cancel(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(ms: number): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      const idle = this.clock.now() - this.lastSeenAt;
      if (idle >= this.idleMs) this.onIdle();
      else this.arm(this.idleMs - idle);
    }, ms);
  }
}
