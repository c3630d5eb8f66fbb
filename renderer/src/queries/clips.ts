/** Clip settings and an operator's saved clips as the console caches them. */
import { mutationOptions, type QueryClient, queryOptions } from '@tanstack/react-query';
import { type ClipSettings, clipInfo, getClipSettings, putClipSettings, saveClip } from '../api';
import type { Transport } from '../transport';

/** A pending clip is read again this often until it is ready or none. */
export const CLIP_REFRESH_MS = 500;

export const clipKeys = {
  settings: ['clip-settings'] as const,
  one: (clipId: string) => ['clip', clipId] as const,
};

export const clipSettingsQuery = (transport: Transport) =>
  queryOptions({
    queryKey: clipKeys.settings,
    queryFn: ({ signal }) => getClipSettings(transport, signal),
  });

export const saveClipSettingsMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: (body: Partial<ClipSettings>) => putClipSettings(transport, body),
    onSuccess: (answer) => client.setQueryData(clipKeys.settings, answer),
  });

export const clipQuery = (transport: Transport, clipId: string) =>
  queryOptions({
    queryKey: clipKeys.one(clipId),
    queryFn: ({ signal }) => clipInfo(transport, clipId, signal),
    refetchInterval: (query) => (query.state.data?.state === 'pending' ? CLIP_REFRESH_MS : false),
  });

export const saveClipMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: ({ taskId, seconds }: { taskId: string; seconds: number }) =>
      saveClip(transport, taskId, seconds),
    onSuccess: (clip) => client.setQueryData(clipKeys.one(clip.clip_id), clip),
  });
