/**
 * Desktop settings: where the in-process engine listens and keeps its data. Pure (the caller reads
 * and writes the file), so it is unit-tested without Electron.
 *
 * The file is <userData>/console-settings.json, outside the data folder it names:
 * {"port": 0..65535, "lan": boolean, "data_dir": "<absolute path>" or ""}. The console's settings
 * screen writes it; changes apply when the app restarts.
 *
 * - port: the VC_PORT environment variable wins, then the file, else 0: an ephemeral port chosen by
 *   the OS, so two installs (or a headless engine on 8080) never clash.
 * - lan: false (default) binds 127.0.0.1, so only this machine reaches the API; true binds 0.0.0.0,
 *   and the engine then also serves the web console to the LAN.
 * - data_dir: "" is the default folder <userData>/data.
 */
import { isAbsolute } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import type { SettingsView } from '../preload/api';

export const LOOPBACK_HOST = '127.0.0.1';
export const LAN_HOST = '0.0.0.0';
export const SETTINGS_FILE = 'console-settings.json';

/** What the console's settings screen may change: the shape of the settings:save payload. */
export const SettingsPatchSchema = Type.Object(
  {
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    lan: Type.Optional(Type.Boolean()),
    data_dir: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type SettingsPatch = Static<typeof SettingsPatchSchema>;

export interface SavedSettings {
  port: number;
  lan: boolean;
  /** "" = the default data folder. */
  data_dir: string;
}

export const DEFAULT_SETTINGS: SavedSettings = { port: 0, lan: false, data_dir: '' };

/** What the engine is started with. */
export interface DesktopSettings {
  host: string;
  port: number;
  dataDir: string;
}

/** A TCP port 0..65535 given as a number or decimal text; anything else is null. */
export function parsePort(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (!/^\d{1,5}$/.test(text)) return null;
  const port = Number(text);
  return port <= 65535 ? port : null;
}

/**
 * The saved settings from the file's text (undefined when there is no file). Problems never stop the
 * app: they are returned as warnings and the default of that field is used.
 */
export function parseSavedSettings(text: string | undefined): { saved: SavedSettings; warnings: string[] } {
  const warnings: string[] = [];
  const saved = { ...DEFAULT_SETTINGS };
  if (text === undefined) return { saved, warnings };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { saved, warnings: [`${SETTINGS_FILE} is not valid JSON; using defaults`] };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { saved, warnings: [`${SETTINGS_FILE} must hold an object; using defaults`] };
  }
  const fields = parsed as Record<string, unknown>;
  if ('port' in fields) {
    const port = parsePort(fields.port);
    if (port === null) warnings.push(`${SETTINGS_FILE}: port must be an integer 0..65535; using 0`);
    else saved.port = port;
  }
  if ('lan' in fields) {
    if (typeof fields.lan === 'boolean') saved.lan = fields.lan;
    else warnings.push(`${SETTINGS_FILE}: lan must be true or false; using false`);
  }
  if ('data_dir' in fields) {
    const dir = fields.data_dir;
    if (typeof dir === 'string' && (dir === '' || isAbsolute(dir))) saved.data_dir = dir;
    else warnings.push(`${SETTINGS_FILE}: data_dir must be an absolute path; using the default folder`);
  }
  return { saved, warnings };
}

/** The settings the engine starts with: the saved ones, VC_PORT over the saved port. */
export function resolveSettings(
  env: Record<string, string | undefined>,
  saved: SavedSettings,
  defaultDataDir: string,
): { settings: DesktopSettings; warnings: string[] } {
  const warnings: string[] = [];
  let port = saved.port;
  if (env.VC_PORT !== undefined && env.VC_PORT !== '') {
    const envPort = parsePort(env.VC_PORT);
    if (envPort !== null) port = envPort;
    else warnings.push('VC_PORT must be an integer 0..65535; ignored');
  }
  return {
    settings: {
      host: saved.lan ? LAN_HOST : LOOPBACK_HOST,
      port,
      dataDir: saved.data_dir === '' ? defaultDataDir : saved.data_dir,
    },
    warnings,
  };
}

/**
 * The saved settings after a change from the console, or the reason it is refused. A data folder
 * must be an absolute path ("" for the default); the caller checks it came from the folder dialog.
 */
export function applyPatch(saved: SavedSettings, patch: SettingsPatch): SavedSettings | { error: string } {
  if (patch.data_dir !== undefined && patch.data_dir !== '' && !isAbsolute(patch.data_dir)) {
    return { error: 'data_dir must be an absolute path' };
  }
  return {
    port: patch.port ?? saved.port,
    lan: patch.lan ?? saved.lan,
    data_dir: patch.data_dir ?? saved.data_dir,
  };
}

export function serializeSettings(saved: SavedSettings): string {
  return `${JSON.stringify(saved, null, 2)}\n`;
}

/** What the settings screen shows: the saved settings and what the running engine uses. */
export function settingsView(
  saved: SavedSettings,
  running: { url: string; host: string; port: number; dataDir: string },
  defaultDataDir: string,
  env: Record<string, string | undefined>,
): SettingsView {
  return { saved, running, defaultDataDir, portFromEnv: parsePort(env.VC_PORT ?? '') !== null };
}
