/**
 * Preload of the console window. It runs sandboxed (CommonJS, may only require 'electron') and
 * exposes a fixed, minimal API: one function per IPC channel, no generic invoke, no Node access.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { EngineRequest, VisionConsoleApi } from './api';
import { Channels } from './channels';

const api: VisionConsoleApi = {
  request: (request: EngineRequest) => ipcRenderer.invoke(Channels.request, request),
  openZapk: () => ipcRenderer.invoke(Channels.openZapk, null),
  installZapk: (path: string) => ipcRenderer.invoke(Channels.installZapk, { path }),
  info: () => ipcRenderer.invoke(Channels.info, null),
};

contextBridge.exposeInMainWorld('visionConsole', Object.freeze(api));
