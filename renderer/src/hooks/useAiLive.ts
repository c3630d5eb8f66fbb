import { useMutation } from '@tanstack/react-query';
import { useEffect } from 'react';
import { closeAiLive, startAiLive } from '../api';
import { ApiError, type Transport } from '../transport';

/** How often, and how far apart, an AI video is asked for again while its source (re)opens (503). */
const RETRIES = 5;
const RETRY_DELAY_MS = 2_000;

/**
 * A task's AI video (4.10) while a view shows it. Each allocation is a stream the engine encodes until
 * it is closed, so it is a mutation, never a cached query: made when the view opens or the apps
 * change (appIds non-empty), released by the effect's cleanup, also when it arrives after the view left.
 */
export function useAiLive(transport: Transport, taskId: string, appIds: readonly string[]) {
  const appKey = appIds.join('\n');
  const start = useMutation({
    mutationFn: (apps: string[]) => startAiLive(transport, taskId, apps),
    // 503: the source is (re)opening; anything else will not get better by asking again.
    retry: (failures, error) => error instanceof ApiError && error.status === 503 && failures < RETRIES,
    retryDelay: RETRY_DELAY_MS,
  });
  const { mutateAsync, reset } = start;
  useEffect(() => {
    if (appKey === '') return;
    let left = false;
    let stream: string | null = null;
    const release = (id: string) =>
      closeAiLive(transport, taskId, id).catch(() => {
        // Already gone with its task.
      });
    mutateAsync(appKey.split('\n')).then(
      (live) => {
        if (left) void release(live.stream);
        else stream = live.stream;
      },
      () => {
        // The mutation's state shows the failure.
      },
    );
    return () => {
      left = true;
      if (stream) void release(stream);
      reset();
    };
  }, [appKey, taskId, transport, mutateAsync, reset]);
  return start;
}
