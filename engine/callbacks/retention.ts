import type { Clock, TimerHandle } from '../clock';
import { writeUnlessFull } from '../store/disk-full';
import type { Outbox } from './outbox';

const HOURLY = 3600_000;

/**
 * Purges the outbox now and every hour (see Outbox.purge for what goes); returns the stop. A purge
 * needs room to write too: on a full disk it waits for the next hour.
 */
export function startRetention(outbox: Outbox, clock: Clock): () => void {
  let timer: TimerHandle | undefined;
  const run = () => {
    writeUnlessFull(() => outbox.purge());
    timer = clock.setTimeout(run, HOURLY);
  };
  run();
  return () => {
    if (timer) clock.clearTimeout(timer);
  };
}
