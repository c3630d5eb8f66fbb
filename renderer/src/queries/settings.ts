/** Engine and desktop settings as the console caches them, and the writes that change them. */
import { mutationOptions, type QueryClient, queryOptions } from '@tanstack/react-query';
import type { SavedSettings, SettingsView, VisionConsoleApi } from '../../../preload/api';
import {
  type CallbackSettings,
  getCallbacks,
  getMqtt,
  type MqttSettings,
  putCallbacks,
  putMqtt,
} from '../api';
import type { Transport } from '../transport';

/** How often the MQTT view is read again: its status (connected, backlog) changes on its own. */
export const MQTT_REFRESH_MS = 5_000;

export const settingsKeys = {
  mqtt: ['mqtt'] as const,
  callbacks: ['callback-settings'] as const,
  desktop: ['desktop-settings'] as const,
  appInfo: ['app-info'] as const,
};

export const mqttQuery = (transport: Transport) =>
  queryOptions({
    queryKey: settingsKeys.mqtt,
    queryFn: ({ signal }) => getMqtt(transport, signal),
    refetchInterval: MQTT_REFRESH_MS,
  });

/**
 * Both saves answer with the whole view as it now is: that answer goes into the cache (read again
 * only when the save failed).
 */
function keepAnswer<T>(client: QueryClient, queryKey: readonly string[]) {
  return (answer: T | undefined) =>
    answer === undefined ? client.invalidateQueries({ queryKey }) : client.setQueryData(queryKey, answer);
}

export const saveMqttMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: (body: Record<string, unknown>): Promise<MqttSettings> => putMqtt(transport, body),
    onSettled: keepAnswer<MqttSettings>(client, settingsKeys.mqtt),
  });

export const callbacksQuery = (transport: Transport) =>
  queryOptions({
    queryKey: settingsKeys.callbacks,
    queryFn: ({ signal }) => getCallbacks(transport, signal),
  });

export const saveCallbacksMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: (body: CallbackSettings): Promise<CallbackSettings> => putCallbacks(transport, body),
    onSettled: keepAnswer<CallbackSettings>(client, settingsKeys.callbacks),
  });

/** Desktop only: what main saved for the next start and what runs now. */
export const desktopSettingsQuery = (api: VisionConsoleApi | undefined) =>
  queryOptions({
    queryKey: settingsKeys.desktop,
    queryFn: () => api?.getSettings() ?? Promise.reject(new Error('not the desktop app')),
    enabled: api !== undefined,
  });

export const saveDesktopSettingsMutation = (api: VisionConsoleApi | undefined, client: QueryClient) =>
  mutationOptions({
    mutationFn: (patch: Partial<SavedSettings>) =>
      api?.saveSettings(patch) ?? Promise.reject(new Error('not the desktop app')),
    onSettled: keepAnswer<SettingsView>(client, settingsKeys.desktop),
  });

/** Desktop only: the app's facts (the engine's URL among them); they do not change while it runs. */
export const appInfoQuery = (api: VisionConsoleApi | undefined) =>
  queryOptions({
    queryKey: settingsKeys.appInfo,
    queryFn: () => api?.info() ?? Promise.reject(new Error('not the desktop app')),
    enabled: api !== undefined,
    staleTime: Number.POSITIVE_INFINITY,
  });
