/**
 * Desktop transport: every call goes through main (window.visionConsole.request), which adds the
 * token. The renderer never holds a credential in this mode.
 */
import type { VisionConsoleApi } from '../../../preload/api';
import {
  ApiError,
  type Envelope,
  type HttpMethod,
  NO_ENVELOPE,
  type PackageInstalled,
  type RequestOptions,
  type Transport,
  toEnvelope,
} from './types';

/** Electron prefixes rejected invokes with "Error invoking remote method '<channel>': <Name>: ". */
export function ipcErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Error invoking remote method '[^']*': (?:\w*Error: )?/, '');
}

export function createIpcTransport(api: VisionConsoleApi): Transport {
  return {
    kind: 'ipc',
    async request<T>(method: HttpMethod, path: string, body?: unknown, options?: RequestOptions) {
      const signal = options?.signal;
      signal?.throwIfAborted();
      // A call the page may stop waiting for is named, so that main aborts its engine call too: the
      // engine then drops the work (a source being opened) instead of finishing it unseen.
      const requestId = signal ? crypto.randomUUID() : undefined;
      const cancel = () => void api.cancelRequest(requestId as string).catch(() => undefined);
      signal?.addEventListener('abort', cancel, { once: true });
      let response: Awaited<ReturnType<VisionConsoleApi['request']>>;
      try {
        response = await api.request({
          method,
          path,
          ...(options?.query ? { query: options.query } : {}),
          ...(body !== undefined ? { body } : {}),
          ...(requestId ? { request_id: requestId } : {}),
        });
      } catch (error) {
        signal?.throwIfAborted();
        throw new ApiError(0, NO_ENVELOPE, ipcErrorMessage(error));
      } finally {
        signal?.removeEventListener('abort', cancel);
      }
      return toEnvelope<T>(response.status, response.body) as Envelope<T>;
    },
    async installPackage(file) {
      let response: Awaited<ReturnType<VisionConsoleApi['installZapkData']>>;
      try {
        response = await api.installZapkData({
          name: file.name,
          data: new Uint8Array(await file.arrayBuffer()),
        });
      } catch (error) {
        throw new ApiError(0, NO_ENVELOPE, ipcErrorMessage(error));
      }
      return toEnvelope<PackageInstalled>(response.status, response.body);
    },
    // Media comes straight from the engine's loopback origin; main adds the Authorization header.
    mediaUrl: (url) => url,
    mediaHeaders: () => ({}),
    subscribe(listener, onStatus) {
      const stopEvents = api.onEvent((body) => listener({ type: 'callback', body }));
      const stopDeliveries = api.onDelivery((record) => listener({ type: 'delivery', record }));
      onStatus?.(true);
      return () => {
        stopEvents();
        stopDeliveries();
      };
    },
  };
}

/** Installs a package through main's file dialog; resolves to null when the user cancels. */
export async function installPackageViaDialog(api: VisionConsoleApi): Promise<Envelope<unknown> | null> {
  let path: string | null;
  try {
    path = await api.openZapk();
  } catch (error) {
    throw new ApiError(0, NO_ENVELOPE, ipcErrorMessage(error));
  }
  if (path === null) return null;
  let response: Awaited<ReturnType<VisionConsoleApi['installZapk']>>;
  try {
    response = await api.installZapk(path);
  } catch (error) {
    throw new ApiError(0, NO_ENVELOPE, ipcErrorMessage(error));
  }
  return toEnvelope(response.status, response.body);
}
