import { createHttpTransport, type HttpTransportOptions } from './http';
import { createIpcTransport } from './ipc';
import type { Transport } from './types';

export * from './types';

/** IPC inside the desktop app (window.visionConsole exists), same-origin HTTP in a browser. */
export function createTransport(http: HttpTransportOptions): Transport {
  const desktop = typeof window !== 'undefined' ? window.visionConsole : undefined;
  return desktop ? createIpcTransport(desktop) : createHttpTransport(http);
}
