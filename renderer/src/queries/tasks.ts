/**
 * Tasks as the console caches them: one queryOptions per resource, used by useQuery and by
 * invalidation alike, and the writes that change them. A write invalidates the list and the task it
 * touched (mutation factories own onSettled; screens add their own onSuccess/onError).
 */
import { mutationOptions, type QueryClient, queryOptions } from '@tanstack/react-query';
import {
  closeTask,
  getTask,
  listTasks,
  purgeTask,
  type StartTaskBody,
  startTask,
  startTaskAgain,
  type Task,
  type TaskFilter,
  type UpdateTaskBody,
  updateTask,
} from '../api';
import type { Transport } from '../transport';

/** How often tasks are read again: their status and health figures change while they run. */
export const TASKS_REFRESH_MS = 2_000;

export const taskKeys = {
  all: ['tasks'] as const,
  list: (filter: TaskFilter) => ['tasks', filter] as const,
  one: (taskId: string) => ['task', taskId] as const,
};

/**
 * A page of the listing without areas, filtered to what the screen shows (running video tasks for
 * the wall, say); the whole task, areas included, is taskQuery's.
 */
export const tasksQuery = (transport: Transport, filter: TaskFilter = {}) =>
  queryOptions({
    queryKey: taskKeys.list(filter),
    queryFn: ({ signal }) => listTasks(transport, filter, signal),
    refetchInterval: TASKS_REFRESH_MS,
  });

/** What the screens that show only running tasks ask for. */
export const RUNNING: TaskFilter = { state: 'running' };
/** ...and the wall, the live view and other pickers of cameras. */
export const RUNNING_VIDEO: TaskFilter = { state: 'running', mode: 'video' };

export const taskQuery = (transport: Transport, taskId: string) =>
  queryOptions({
    queryKey: taskKeys.one(taskId),
    queryFn: ({ signal }) => getTask(transport, taskId, signal),
    refetchInterval: TASKS_REFRESH_MS,
  });

/** What a task's start, update or close changes: the list, and that task. */
export function invalidateTask(client: QueryClient, taskId: string | undefined): Promise<unknown> {
  return Promise.all([
    client.invalidateQueries({ queryKey: taskKeys.all }),
    taskId === undefined ? undefined : client.invalidateQueries({ queryKey: taskKeys.one(taskId) }),
  ]);
}

/** `signal()` gives each start the signal that stops its wait (the wizard's "Stop waiting"). */
export const startTaskMutation = (transport: Transport, client: QueryClient, signal?: () => AbortSignal) =>
  mutationOptions({
    mutationFn: (body: StartTaskBody) => startTask(transport, body, signal?.()),
    onSettled: (taskId: string | undefined) => invalidateTask(client, taskId),
  });

export const updateTaskMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: ({ taskId, body }: { taskId: string; body: UpdateTaskBody }): Promise<Task> =>
      updateTask(transport, taskId, body),
    onSettled: (_task, _error, { taskId }) => invalidateTask(client, taskId),
  });

export const closeTaskMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: (taskId: string) => closeTask(transport, taskId),
    onSettled: (_data, _error, taskId) => invalidateTask(client, taskId),
  });

/** A closed task started again as a new one: the listing changes (the closed one stays as it was). */
export const startAgainMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: (taskId: string) => startTaskAgain(transport, taskId),
    onSettled: () => invalidateTask(client, undefined),
  });

export const purgeTaskMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: (taskId: string) => purgeTask(transport, taskId),
    onSettled: (_data, _error, taskId) => invalidateTask(client, taskId),
  });
