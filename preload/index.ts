/**
 * Preload of the console window. It runs sandboxed (CommonJS, may only require 'electron') and
 * exposes a fixed, minimal API: one function per IPC channel, no generic invoke, no Node access.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { DeliveryRecord, EngineEvent, EngineRequest, EngineState, VisionConsoleApi } from './api';
import { Channels, PushChannels } from './channels';

/** Subscribes a page listener to one push channel; the IPC event object never reaches the page. */
function push<T>(channel: string, listener: (payload: T) => void): () => void {
  const forward = (_event: Electron.IpcRendererEvent, payload: T) => listener(payload);
  ipcRenderer.on(channel, forward);
  return () => {
    ipcRenderer.removeListener(channel, forward);
  };
}

const api: VisionConsoleApi = {
  request: (request: EngineRequest) => ipcRenderer.invoke(Channels.request, request),
  cancelRequest: (requestId: string) => ipcRenderer.invoke(Channels.cancelRequest, { request_id: requestId }),
  openZapk: () => ipcRenderer.invoke(Channels.openZapk, null),
  installZapk: (path: string) => ipcRenderer.invoke(Channels.installZapk, { path }),
  installZapkData: ({ name, data }) => ipcRenderer.invoke(Channels.installZapkData, { name, data }),
  info: () => ipcRenderer.invoke(Channels.info, null),
  getSettings: () => ipcRenderer.invoke(Channels.getSettings, null),
  saveSettings: (patch) => ipcRenderer.invoke(Channels.saveSettings, patch),
  chooseDataDir: () => ipcRenderer.invoke(Channels.chooseDataDir, null),
  chooseMediaDir: () => ipcRenderer.invoke(Channels.chooseMediaDir, null),
  relaunch: () => ipcRenderer.invoke(Channels.relaunch, null),
  onEvent: (listener) => push<EngineEvent>(PushChannels.event, listener),
  onDelivery: (listener) => push<DeliveryRecord>(PushChannels.delivery, listener),
  engineState: () => ipcRenderer.invoke(Channels.engineState, null),
  onEngineState: (listener) => push<EngineState>(PushChannels.engineState, listener),
};

contextBridge.exposeInMainWorld('visionConsole', Object.freeze(api));
