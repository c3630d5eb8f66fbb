import type { Clock } from '../clock';
import type { EventBus } from '../events/bus';
import type { DeliveryRecord } from '../events/delivery';
import type { TaskRegistry } from '../tasks/registry';
import type { TaskView } from '../tasks/schema';
import type { EngineLogger } from './logger';
import { displayUrl } from './scrub';
import { LogThrottle, type ThrottleLimits } from './throttle';

/** What the operations log listens to. */
export interface LoggedSources {
  tasks: TaskRegistry;
  /** Running video tasks: their analysis errors. */
  video: { on(event: 'analysis_error', listener: (taskId: string, reason: string) => void): unknown };
  bus: EventBus;
}

export interface OperationsLogOptions {
  /** Windows of the repeating lines (stream changes, analysis errors, delivery failures). */
  throttle?: Partial<Pick<ThrottleLimits, 'windowMs' | 'maxKeys'>>;
}

/** Stream changes written in full per task and window: a flapping camera's first few, then a count. */
const STREAM_BURST = 5;

type Fields = Record<string, unknown> & { task_id: string };

/**
 * The engine log's account of what happened, one structured line each with stable fields (event,
 * task_id, reason, counts), for an operator or an investigator: task start, update and close,
 * streams lost and restored with their reconnect counts, analysis errors, callbacks that failed or
 * were given up. The lines that can repeat fast are throttled per task (throttle.ts). The audit
 * trail writes its own lines (logins, password changes, settings, packages). Returns the stop.
 */
export function logOperations(
  log: EngineLogger,
  clock: Clock,
  sources: LoggedSources,
  options: OperationsLogOptions = {},
): () => void {
  const throttled = (level: 'info' | 'warn', event: string, message: (f: Fields) => string, burst = 1) =>
    new LogThrottle<Fields>(
      clock,
      (fields, repeats, windowMs) =>
        log[level](
          { event, ...fields, ...(repeats > 0 && { repeats, window_s: windowMs / 1000 }) },
          repeats > 0
            ? `${event}: ${repeats} more for task ${fields.task_id} in ${windowMs / 1000} s, the last: ${message(fields)}`
            : `${event}: task ${fields.task_id}: ${message(fields)}`,
        ),
      { windowMs: options.throttle?.windowMs, maxKeys: options.throttle?.maxKeys, burst },
    );
  const lost = throttled('warn', 'stream.lost', (f) => `${f.reason}`, STREAM_BURST);
  const restored = throttled(
    'info',
    'stream.restored',
    (f) => `${f.reconnects} reconnects so far`,
    STREAM_BURST,
  );
  const analysis = throttled('warn', 'analysis.error', (f) => `${f.reason}`);
  const failedDelivery = throttled('warn', 'delivery.failed', (f) => `attempt ${f.attempts}: ${f.error}`);
  const deadDelivery = throttled('warn', 'delivery.dead', (f) => `event ${f.event_id} given up: ${f.error}`);

  const { tasks, video, bus } = sources;
  tasks.on('started', (view) =>
    log.info(
      {
        event: 'task.started',
        task_id: view.task_id,
        name: view.name,
        mode: view.mode,
        zapk_id: view.zapk_id,
        app_ids: view.app_ids,
        source: view.video_url ? displayUrl(view.video_url) : null,
        receiver: view.report_url ? displayUrl(view.report_url) : null,
      },
      `task.started: task ${view.task_id} (${view.mode}, ${view.app_ids.join(', ')})`,
    ),
  );
  tasks.on('updated', (view) =>
    log.info(
      {
        event: 'task.updated',
        task_id: view.task_id,
        app_ids: view.app_ids,
        analysis_fps: view.analysis_fps,
      },
      `task.updated: task ${view.task_id}`,
    ),
  );
  tasks.on('closed', (view) =>
    log[view.close_code === 1 ? 'info' : 'warn'](
      { event: 'task.closed', task_id: view.task_id, close_code: view.close_code, reason: view.dump },
      `task.closed: task ${view.task_id}: ${view.dump}`,
    ),
  );
  tasks.on('stream_lost', (view) =>
    lost.line(view.task_id, {
      task_id: view.task_id,
      reason: stream(view)?.last_error ?? view.dump,
      reconnects: stream(view)?.reconnects ?? 0,
    }),
  );
  tasks.on('stream_restored', (view) =>
    restored.line(view.task_id, {
      task_id: view.task_id,
      reconnects: stream(view)?.reconnects ?? 0,
      width: stream(view)?.width ?? null,
      height: stream(view)?.height ?? null,
    }),
  );
  video.on('analysis_error', (taskId, reason) => analysis.line(taskId, { task_id: taskId, reason }));
  const onDelivery = (record: DeliveryRecord) => {
    const fields = {
      task_id: record.task_id,
      event_id: record.event_id,
      attempts: record.attempts,
      http_status: record.http_status,
      error: record.last_error,
    };
    if (record.state === 'dead') deadDelivery.line(record.task_id, fields);
    else if (record.state === 'pending' && record.attempts > 0 && record.last_error)
      failedDelivery.line(record.task_id, fields);
  };
  bus.on('delivery', onDelivery);
  return () => {
    bus.off('delivery', onDelivery);
    for (const throttle of [lost, restored, analysis, failedDelivery, deadDelivery]) throttle.close();
  };
}

const stream = (view: TaskView) => view.health.stream;
