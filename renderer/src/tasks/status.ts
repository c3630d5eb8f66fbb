/**
 * A task's state as operators read it: one tone and one message from its status and its health
 * figures (never from the engine's dump line), so every screen shows a lost stream the same way.
 */
import { isRunning, type Task } from '../api';
import type { MessageKey, Params } from '../i18n';

export type Tone = 'ok' | 'warn' | 'bad' | 'idle';

export interface TaskState {
  tone: Tone;
  message: MessageKey;
  params?: Params;
}

const CLOSED: Record<number, MessageKey> = {
  1: 'status.closed.1',
  2: 'status.closed.2',
  3: 'status.closed.3',
  4: 'status.closed.4',
  5: 'status.closed.5',
};

export function taskState(task: Pick<Task, 'close_code' | 'status' | 'health'>): TaskState {
  if (!isRunning(task)) {
    const message = CLOSED[task.close_code];
    return message
      ? { tone: 'idle', message }
      : { tone: 'idle', message: 'status.closed.other', params: { code: task.close_code } };
  }
  if (task.status === 'starting') return { tone: 'idle', message: 'status.starting' };
  const stream = task.health.stream;
  if (task.status === 'stream_lost' || stream?.state === 'reconnecting' || stream?.state === 'connecting')
    return { tone: 'bad', message: 'status.streamLost' };
  if (stream?.state === 'stalled') return { tone: 'warn', message: 'status.stalled' };
  if (task.health.overloaded) return { tone: 'warn', message: 'status.overloaded' };
  if (task.health.frames_analysed > 0 && task.health.analysis_errors >= task.health.frames_analysed)
    return { tone: 'bad', message: 'status.analysisFailing' };
  if (task.health.events_refused > 0)
    return { tone: 'warn', message: 'status.eventsRefused', params: { count: task.health.events_refused } };
  // A sub-stream task's other stream (issue 36): clips have a gap, or analysis reads the costlier main stream.
  const sub = task.health.sub_stream;
  if (sub?.main.state === 'lost') return { tone: 'warn', message: 'status.mainStreamLost' };
  if (sub?.state === 'lost') return { tone: 'warn', message: 'status.subStreamLost' };
  return { tone: 'ok', message: 'status.running' };
}
