import type { EventEmitter } from 'node:events';
import type { Clock } from '../clock';
import type { EventKind, NewEvent } from '../events/schema';
import type { TaskEvents } from '../tasks/registry';
import type { TaskView } from '../tasks/schema';
import type { ReportTarget } from './outbox';

export interface TaskEventWiring {
  /** The task's report_secret, when it has one (the registry's view does not show secrets). */
  secretOf?: (taskId: string) => string | undefined;
  /** Told when an event could not be stored; the task's own change is not undone by that. */
  onError: (error: unknown, taskId: string) => void;
}

/**
 * Turns the task registry's lifecycle into events delivered like results: task_closed (with
 * close_code), stream_lost and stream_restored, app_id "" and data {close_code?, status, dump}.
 * Takes the registry as the emitter of its TaskEvents: the registry needs no change for this.
 */
export function wireTaskEvents(
  tasks: EventEmitter<TaskEvents>,
  outbox: { enqueue(target: ReportTarget, event: NewEvent): unknown },
  clock: Clock,
  wiring: TaskEventWiring,
): () => void {
  const emit = (kind: Exclude<EventKind, 'message'>) => (view: TaskView) => {
    try {
      outbox.enqueue(
        {
          task_id: view.task_id,
          report_url: view.report_url,
          report_secret: wiring.secretOf?.(view.task_id),
        },
        {
          event: kind,
          task_id: view.task_id,
          app_id: '',
          business_id: view.business_id,
          timestamp: clock.now(),
          data: {
            ...(kind === 'task_closed' ? { close_code: view.close_code } : {}),
            status: view.status,
            dump: view.dump,
          },
        },
      );
    } catch (error) {
      wiring.onError(error, view.task_id);
    }
  };
  const listeners = {
    closed: emit('task_closed'),
    stream_lost: emit('stream_lost'),
    stream_restored: emit('stream_restored'),
  } as const;
  tasks.on('closed', listeners.closed);
  tasks.on('stream_lost', listeners.stream_lost);
  tasks.on('stream_restored', listeners.stream_restored);
  return () => {
    tasks.off('closed', listeners.closed);
    tasks.off('stream_lost', listeners.stream_lost);
    tasks.off('stream_restored', listeners.stream_restored);
  };
}
