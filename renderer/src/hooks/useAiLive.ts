import { useMutation } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import { closeAiLive, startAiLive, type VideoScale } from '../api';
import { ApiError, type Transport } from '../transport';

/** How often, and how far apart, an AI video is asked for again while its source (re)opens (503). */
const RETRIES = 5;
const RETRY_DELAY_MS = 2_000;
/** After a failure the video is asked for again, 2 s doubling to 30 s, for as long as the view is open. */
const RENEW_FIRST_MS = 2_000;
const RENEW_MAX_MS = 30_000;

/**
 * A task's AI video (4.10) while a view shows it. Each allocation is a stream the engine encodes until
 * it is closed, so it is a mutation, never a cached query: made when the view opens or the apps
 * change (appIds non-empty), released by the effect's cleanup, also when it arrives after the view left.
 * A request that fails (the engine restarting, the source reopening) is made again by itself with
 * backoff; `renew()` asks for a new stream at once (the player lost the one it had). `scale` asks for
 * a smaller video (a wall's tile).
 */
export function useAiLive(
  transport: Transport,
  taskId: string,
  appIds: readonly string[],
  scale?: VideoScale,
) {
  const appKey = appIds.join('\n');
  const width = scale?.width;
  const bitrate = scale?.bitrate;
  const [round, setRound] = useState(0);
  const [failures, setFailures] = useState(0);
  const start = useMutation({
    mutationFn: (apps: string[]) =>
      startAiLive(transport, taskId, apps, width && bitrate ? { width, bitrate } : undefined),
    // 503: the source is (re)opening; anything else will not get better by asking again at once.
    retry: (count, error) => error instanceof ApiError && error.status === 503 && count < RETRIES,
    retryDelay: RETRY_DELAY_MS,
  });
  const { mutateAsync, reset } = start;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new round asks for a new stream
  useEffect(() => {
    if (appKey === '') return;
    let left = false;
    let stream: string | null = null;
    const release = (id: string) =>
      closeAiLive(transport, taskId, id).catch(() => {
        // Already gone with its task, or with the engine.
      });
    mutateAsync(appKey.split('\n')).then(
      (live) => {
        setFailures(0);
        if (left) void release(live.stream);
        else stream = live.stream;
      },
      () => setFailures((count) => count + 1),
    );
    return () => {
      left = true;
      if (stream) void release(stream);
      reset();
    };
  }, [appKey, taskId, transport, mutateAsync, reset, round, width, bitrate]);

  useEffect(() => {
    if (failures === 0) return;
    const delay = Math.min(RENEW_MAX_MS, RENEW_FIRST_MS * 2 ** (failures - 1));
    const timer = setTimeout(() => setRound((value) => value + 1), delay);
    return () => clearTimeout(timer);
  }, [failures]);

  const renew = useCallback(() => setRound((value) => value + 1), []);
  return { ...start, renew };
}
