import { MutationObserver, type MutationOptions, QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { judgeSampleMutation, optimizationKeys } from '../renderer/src/queries/optimizations';
import {
  packageKeys,
  packagesQuery,
  uninstallPackageMutation,
  updateAppMutation,
} from '../renderer/src/queries/packages';
import { settingsKeys } from '../renderer/src/queries/settings';
import {
  closeTaskMutation,
  purgeTaskMutation,
  RUNNING_VIDEO,
  startTaskMutation,
  taskKeys,
  taskQuery,
  tasksQuery,
  updateTaskMutation,
} from '../renderer/src/queries/tasks';
import type { RequestOptions, Transport } from '../renderer/src/transport';

/** A transport that answers every call with `data` and records what was asked. */
function fakeTransport(data: unknown): Transport & { calls: string[] } {
  const calls: string[] = [];
  return {
    kind: 'http',
    calls,
    request: async (method: string, path: string, _body?: unknown, options?: RequestOptions) => {
      const query = new URLSearchParams(Object.entries(options?.query ?? {}).map(([k, v]) => [k, String(v)]));
      calls.push(`${method} ${path}${query.size > 0 ? `?${query}` : ''}`);
      return { code: 0, msg: 'success', data } as never;
    },
    subscribe: () => () => {},
    installPackage: async () => ({ code: 0, msg: 'success', data: null }) as never,
    mediaUrl: (url: string) => url,
    mediaHeaders: () => ({}),
  };
}

const CACHED = [
  taskKeys.list({}),
  taskKeys.list(RUNNING_VIDEO),
  taskKeys.one('a'),
  taskKeys.one('b'),
  packageKeys.all,
  optimizationKeys.runs('a'),
  optimizationKeys.runs('b'),
  settingsKeys.mqtt,
];

/** Runs a mutation against a cache holding every resource, and names the queries it invalidated. */
async function invalidatedBy<T, V>(
  options: (client: QueryClient) => MutationOptions<T, Error, V>,
  variables: V,
): Promise<string[]> {
  const client = new QueryClient();
  for (const key of CACHED) client.setQueryData(key, []);
  await new MutationObserver(client, options(client)).mutate(variables);
  return CACHED.filter((key) => client.getQueryState(key)?.isInvalidated).map((key) =>
    key.map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join('/'),
  );
}

describe('the console data layer', () => {
  it('one key per resource, the same for reading and invalidating', () => {
    const transport = fakeTransport([]);
    expect(tasksQuery(transport).queryKey).toEqual(['tasks', {}]);
    expect(tasksQuery(transport, RUNNING_VIDEO).queryKey).toEqual([
      'tasks',
      { state: 'running', mode: 'video' },
    ]);
    expect(taskQuery(transport, 'a').queryKey).toEqual(['task', 'a']);
    expect(packagesQuery(transport).queryKey).toEqual(['packages']);
  });

  it('asks the listing for the page it shows, never for the areas', async () => {
    const transport = fakeTransport([]);
    const client = new QueryClient();
    await client.fetchQuery(tasksQuery(transport, RUNNING_VIDEO));
    await client.fetchQuery(tasksQuery(transport));
    expect(transport.calls).toEqual(['GET /api/tasks?state=running&mode=video', 'GET /api/tasks']);
  });

  it('a task write invalidates every list and that task, nothing else', async () => {
    const transport = fakeTransport({ task_id: 'a' });
    const lists = ['tasks/{}', 'tasks/{"state":"running","mode":"video"}'];
    expect(await invalidatedBy((client) => closeTaskMutation(transport, client), 'a')).toEqual([
      ...lists,
      'task/a',
    ]);
    expect(await invalidatedBy((client) => purgeTaskMutation(transport, client), 'a')).toEqual([
      ...lists,
      'task/a',
    ]);
    expect(
      await invalidatedBy((client) => updateTaskMutation(transport, client), {
        taskId: 'b',
        body: { app_ids: ['x'] },
      }),
    ).toEqual([...lists, 'task/b']);
    expect(
      await invalidatedBy((client) => startTaskMutation(transport, client), {
        mode: 'video',
        zapk_id: 'p',
        app_ids: ['x'],
        video_url: 'rtsp://127.0.0.1/cam',
      }),
    ).toEqual([...lists, 'task/a']);
    expect(transport.calls).toEqual([
      'DELETE /api/task/a',
      'DELETE /api/task/a?purge=true',
      'PUT /api/task/b',
      'POST /api/task',
    ]);
  });

  it('a package write invalidates packages; a verdict the runs of its task', async () => {
    const transport = fakeTransport(null);
    expect(await invalidatedBy((client) => uninstallPackageMutation(transport, client), 'p')).toEqual([
      'packages',
    ]);
    expect(
      await invalidatedBy((client) => updateAppMutation(transport, client), {
        zapkId: 'p',
        appId: 'x',
        body: { name: 'X' },
      }),
    ).toEqual(['packages']);
    const run = { task_id: 'b', optimization_id: 'o' };
    expect(
      await invalidatedBy((client) => judgeSampleMutation(transport, client, run), {
        sample: { sample_id: 3 } as never,
        judgement: { verdict: 'right' },
      }),
    ).toEqual(['optimizations/b']);
  });
});
