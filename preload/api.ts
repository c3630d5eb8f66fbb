/**
 * The API the preload exposes as `window.visionConsole` (type-only: the renderer imports these types
 * and never the preload itself). Nothing exposed here carries a secret: main holds the engine token.
 */

import type { CallbackBody } from '../engine/events/schema';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export type QueryValue = string | number | boolean;

export interface EngineRequest {
  method: HttpMethod;
  /** An engine API path starting with /api/, without query string (e.g. /api/task/<id>). */
  path: string;
  query?: Record<string, QueryValue>;
  /** JSON body for POST and PUT. */
  body?: unknown;
}

export interface EngineResponse {
  /** HTTP status the engine answered with. */
  status: number;
  /** The engine's JSON envelope {code, msg, data}. */
  body: unknown;
}

/** A stored result event: the callback body of part 6 with event_id and seq. */
export type EngineEvent = CallbackBody;

export interface AppInfo {
  version: string;
  engineUrl: string;
}

export interface VisionConsoleApi {
  request(request: EngineRequest): Promise<EngineResponse>;
  /** Opens the native file dialog filtered to .zapk; resolves to the chosen path or null when cancelled. */
  openZapk(): Promise<string | null>;
  /** Installs a package whose path came from openZapk (any other path is refused by main). */
  installZapk(path: string): Promise<EngineResponse>;
  info(): Promise<AppInfo>;
  /** Calls the listener with every result event the engine stores; returns the unsubscribe. */
  onEvent(listener: (event: EngineEvent) => void): () => void;
}
