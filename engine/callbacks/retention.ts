import type { Clock, TimerHandle } from '../clock';
import type { Outbox } from './outbox';

const HOURLY = 3600_000;

/** Purges the outbox now and every hour (see Outbox.purge for what goes); returns the stop. */
export function startRetention(outbox: Outbox, clock: Clock): () => void {
  let timer: TimerHandle | undefined;
  const run = () => {
    outbox.purge();
    timer = clock.setTimeout(run, HOURLY);
  };
  run();
  return () => {
    if (timer) clock.clearTimeout(timer);
  };
}
