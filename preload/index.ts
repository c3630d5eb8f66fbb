/**
 * Preload of the console window. It runs sandboxed (CommonJS, may only require 'electron') and
 * exposes a fixed, minimal API: one function per IPC channel, no generic invoke, no Node access.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { EngineEvent, EngineRequest, VisionConsoleApi } from './api';
import { Channels, PushChannels } from './channels';

const api: VisionConsoleApi = {
  request: (request: EngineRequest) => ipcRenderer.invoke(Channels.request, request),
  openZapk: () => ipcRenderer.invoke(Channels.openZapk, null),
  installZapk: (path: string) => ipcRenderer.invoke(Channels.installZapk, { path }),
  info: () => ipcRenderer.invoke(Channels.info, null),
  onEvent: (listener) => {
    const forward = (_event: Electron.IpcRendererEvent, body: EngineEvent) => listener(body);
    ipcRenderer.on(PushChannels.event, forward);
    return () => {
      ipcRenderer.removeListener(PushChannels.event, forward);
    };
  },
};

contextBridge.exposeInMainWorld('visionConsole', Object.freeze(api));
