/**
 * The API the preload exposes as `window.visionConsole` (type-only: the renderer imports these types
 * and never the preload itself). Nothing exposed here carries a secret: main holds the engine token.
 */

import type { CallbackBody, DeliveryRecord } from '../engine/contract';
import type { EngineState } from '../engine/contract/engine-process';
import type { SavedSettings } from '../main/settings';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export type QueryValue = string | number | boolean;

export interface EngineRequest {
  method: HttpMethod;
  /** An engine API path starting with /api/, without query string (e.g. /api/task/<id>). */
  path: string;
  query?: Record<string, QueryValue>;
  /** JSON body for POST and PUT. */
  body?: unknown;
  /** The page's name for this call, for cancelRequest: 8 to 64 of A-Z a-z 0-9 _ -. */
  request_id?: string;
}

export interface EngineResponse {
  /** HTTP status the engine answered with. */
  status: number;
  /** The engine's JSON envelope {code, msg, data}. */
  body: unknown;
}

/** A stored result event: the callback body of part 6 with event_id and seq. */
export type EngineEvent = CallbackBody;

export type { DeliveryRecord, EngineState, SavedSettings };

export interface AppInfo {
  version: string;
  engineUrl: string;
}

/** A .zapk the operator dropped on the window: its bytes, read by the page. */
export interface ZapkData {
  name: string;
  data: Uint8Array;
}

export interface SettingsView {
  saved: SavedSettings;
  /** What the running engine uses. */
  running: { url: string; host: string; port: number; dataDir: string; mediaDirs: string[] };
  defaultDataDir: string;
  /** The media folders of the next start when the saved list is null (the defaults). */
  defaultMediaDirs: string[];
  /** VC_PORT is set: it overrides the saved port. */
  portFromEnv: boolean;
}

export interface VisionConsoleApi {
  request(request: EngineRequest): Promise<EngineResponse>;
  /** Aborts main's engine call for that request_id; nothing when it has ended. */
  cancelRequest(requestId: string): Promise<null>;
  /** Opens the native file dialog filtered to .zapk; resolves to the chosen path or null when cancelled. */
  openZapk(): Promise<string | null>;
  /** Installs a package whose path came from openZapk (any other path is refused by main). */
  installZapk(path: string): Promise<EngineResponse>;
  /** Installs a dropped package from its bytes (main never reads a path the page names). */
  installZapkData(zapk: ZapkData): Promise<EngineResponse>;
  info(): Promise<AppInfo>;
  getSettings(): Promise<SettingsView>;
  /**
   * Saves settings for the next start; a data_dir must come from chooseDataDir, and a media folder
   * that is not listed already from chooseMediaDir.
   */
  saveSettings(patch: Partial<SavedSettings>): Promise<SettingsView>;
  /** The native folder dialog; resolves to the chosen folder or null when cancelled. */
  chooseDataDir(): Promise<string | null>;
  /** The native folder dialog for a media folder; resolves to the chosen folder or null when cancelled. */
  chooseMediaDir(): Promise<string | null>;
  /** Restarts the app (the engine stops every task first) so saved settings apply. */
  relaunch(): Promise<void>;
  /** Calls the listener with every result event the engine stores; returns the unsubscribe. */
  onEvent(listener: (event: EngineEvent) => void): () => void;
  /** Calls the listener with every change of an event's delivery state; returns the unsubscribe. */
  onDelivery(listener: (record: DeliveryRecord) => void): () => void;
  /** The engine process's supervision state: starting, running, restarting (with the next try), failed. */
  engineState(): Promise<EngineState>;
  /** Calls the listener with every change of the engine's supervision state; returns the unsubscribe. */
  onEngineState(listener: (state: EngineState) => void): () => void;
}
