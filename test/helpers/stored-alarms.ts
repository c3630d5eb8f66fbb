import { Outbox } from '../../engine/callbacks/outbox';
import { OutboxRepository } from '../../engine/callbacks/outbox-repository';
import { systemClock } from '../../engine/clock';
import { EventBus } from '../../engine/events/bus';
import { openDb } from '../../engine/store/db';
import { message } from './receiver';

/**
 * Stores `count` alarms of a camera (the person app's rule "person:0", class "0", now) in a data dir
 * before its engine starts: alarms for the console to show without waiting for a detection.
 */
export function storeAlarms(dataDir: string, taskId: string, count = 3): void {
  const db = openDb(dataDir);
  const outbox = new Outbox(
    new OutboxRepository(db),
    { listedTaskIds: () => [taskId] },
    systemClock,
    new EventBus(),
  );
  for (let i = 1; i <= count; i++)
    outbox.enqueue({ task_id: taskId, report_url: '' }, { ...message(taskId, i), timestamp: Date.now() });
  db.close();
}
