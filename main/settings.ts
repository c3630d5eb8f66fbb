/**
 * Desktop settings: where the in-process engine listens, keeps its data and may read video files.
 * Pure (the caller reads and writes the file), so it is unit-tested without Electron.
 *
 * The file is <userData>/console-settings.json, outside the data folder it names:
 * {"port": 0..65535, "lan": boolean, "data_dir": "<absolute path>" or "",
 *  "media_dirs": ["<absolute folder>", ...] or null}. The console's settings screen writes it;
 * changes apply when the app restarts.
 *
 * - port: the VC_PORT environment variable wins, then the file, else 0: an ephemeral port chosen by
 *   the OS, so two installs (or a headless engine on 8080) never clash.
 * - lan: false (default) binds 127.0.0.1, so only this machine reaches the API; true binds 0.0.0.0,
 *   and the engine then also serves the web console to the LAN.
 * - data_dir: "" is the default folder <userData>/data.
 * - media_dirs: the folders whose video files may be sources of tasks and previews (the engine's
 *   --media-dir); null is the defaults (defaultMediaDirs). Any other file is refused by the engine.
 */
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { DEFAULT_MEDIA_DIR } from '../engine/contract/media-folders';
import type { SettingsView } from '../preload/api';

export const LOOPBACK_HOST = '127.0.0.1';
export const LAN_HOST = '0.0.0.0';
export const SETTINGS_FILE = 'console-settings.json';
/** The longest folder path the settings take. */
export const MAX_PATH_CHARS = 4096;
/**
 * The most media folders the desktop names: a list the operator reads at a glance, and the engine
 * checks each at every file source it opens.
 */
export const MAX_MEDIA_DIRS = 32;

/** The settings file's shape; what the console's settings screen may change is any part of it. */
export const SavedSettingsSchema = Type.Object(
  {
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    lan: Type.Boolean(),
    /** "" = the default data folder. */
    data_dir: Type.String({ maxLength: MAX_PATH_CHARS }),
    /** null = the default media folders. */
    media_dirs: Type.Union([
      Type.Null(),
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_PATH_CHARS }), {
        minItems: 1,
        maxItems: MAX_MEDIA_DIRS,
        uniqueItems: true,
      }),
    ]),
  },
  { additionalProperties: false },
);
export type SavedSettings = Static<typeof SavedSettingsSchema>;

/** What the console's settings screen may change: the shape of the settings:save payload. */
export const SettingsPatchSchema = Type.Partial(SavedSettingsSchema, {
  additionalProperties: false,
  minProperties: 1,
});
export type SettingsPatch = Static<typeof SettingsPatchSchema>;

export const DEFAULT_SETTINGS: SavedSettings = { port: 0, lan: false, data_dir: '', media_dirs: null };

/** Where the desktop's defaults are: the data folder, and the OS's Videos folder (null when it has none). */
export interface DesktopDefaults {
  dataDir: string;
  videosDir: string | null;
}

/**
 * Why a folder cannot be a media folder, or null when it can: it must be an absolute path, and not
 * the root of a file system (every video file on the disk would be a source).
 */
export function mediaDirProblem(dir: unknown): string | null {
  if (typeof dir !== 'string' || dir === '' || dir.length > MAX_PATH_CHARS) return 'is not a folder path';
  if (!isAbsolute(dir)) return 'is not an absolute path';
  const full = resolve(dir);
  if (dirname(full) === full) return 'is the root of a file system: every video file on it would be a source';
  return null;
}

/**
 * The media folders of a desktop whose operator named none: the data folder's own (the engine's
 * default, where clips can be copied) and the OS's Videos folder, where a desktop user's own clips
 * already are, so that analysing one works without a trip to the settings. Both belong to the user
 * the app runs as; the engine still reads only video files inside them, by real path.
 */
export function defaultMediaDirs(dataDir: string, videosDir: string | null): string[] {
  const dirs = [join(dataDir, DEFAULT_MEDIA_DIR)];
  if (videosDir !== null && mediaDirProblem(videosDir) === null && !dirs.includes(videosDir))
    dirs.push(videosDir);
  return dirs;
}

/** What the engine is started with. */
export interface DesktopSettings {
  host: string;
  port: number;
  dataDir: string;
  /** Passed as --media-dir, one each; never empty. */
  mediaDirs: string[];
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
  if ('media_dirs' in fields && fields.media_dirs !== null) {
    const read = readMediaDirs(fields.media_dirs);
    saved.media_dirs = read.dirs;
    warnings.push(...read.warnings);
  }
  return { saved, warnings };
}

/** The file's media folders: each bad one left out with a warning; none left is the defaults. */
function readMediaDirs(value: unknown): { dirs: string[] | null; warnings: string[] } {
  const defaults = 'using the default media folders';
  if (!Array.isArray(value)) {
    return { dirs: null, warnings: [`${SETTINGS_FILE}: media_dirs must be a list of folders; ${defaults}`] };
  }
  const warnings: string[] = [];
  const dirs: string[] = [];
  for (const dir of value) {
    const problem = mediaDirProblem(dir);
    if (problem !== null)
      warnings.push(`${SETTINGS_FILE}: media_dirs: ${JSON.stringify(dir)} ${problem}; left out`);
    else if (dirs.length === MAX_MEDIA_DIRS)
      warnings.push(
        `${SETTINGS_FILE}: media_dirs: more than ${MAX_MEDIA_DIRS}; ${JSON.stringify(dir)} left out`,
      );
    else if (!dirs.includes(dir)) dirs.push(dir);
  }
  if (dirs.length > 0) return { dirs, warnings };
  return {
    dirs: null,
    warnings: [...warnings, `${SETTINGS_FILE}: media_dirs names no usable folder; ${defaults}`],
  };
}

/** The settings the engine starts with: the saved ones, VC_PORT over the saved port. */
export function resolveSettings(
  env: Record<string, string | undefined>,
  saved: SavedSettings,
  defaults: DesktopDefaults,
): { settings: DesktopSettings; warnings: string[] } {
  const warnings: string[] = [];
  let port = saved.port;
  if (env.VC_PORT !== undefined && env.VC_PORT !== '') {
    const envPort = parsePort(env.VC_PORT);
    if (envPort !== null) port = envPort;
    else warnings.push('VC_PORT must be an integer 0..65535; ignored');
  }
  const dataDir = saved.data_dir === '' ? defaults.dataDir : saved.data_dir;
  return {
    settings: {
      host: saved.lan ? LAN_HOST : LOOPBACK_HOST,
      port,
      dataDir,
      mediaDirs: saved.media_dirs ?? defaultMediaDirs(dataDir, defaults.videosDir),
    },
    warnings,
  };
}

/**
 * The saved settings after a change from the console, or the reason it is refused. A data folder
 * must be an absolute path ("" for the default), a media folder an absolute path that is not a file
 * system's root (null for the defaults); the caller checks that new ones came from the folder dialog.
 */
export function applyPatch(saved: SavedSettings, patch: SettingsPatch): SavedSettings | { error: string } {
  if (patch.data_dir !== undefined && patch.data_dir !== '' && !isAbsolute(patch.data_dir)) {
    return { error: 'data_dir must be an absolute path' };
  }
  for (const dir of patch.media_dirs ?? []) {
    const problem = mediaDirProblem(dir);
    if (problem !== null) return { error: `media_dirs: ${dir} ${problem}` };
  }
  return {
    port: patch.port ?? saved.port,
    lan: patch.lan ?? saved.lan,
    data_dir: patch.data_dir ?? saved.data_dir,
    media_dirs: patch.media_dirs === undefined ? saved.media_dirs : patch.media_dirs,
  };
}

export function serializeSettings(saved: SavedSettings): string {
  return `${JSON.stringify(saved, null, 2)}\n`;
}

/** What the settings screen shows: the saved settings and what the running engine uses. */
export function settingsView(
  saved: SavedSettings,
  running: SettingsView['running'],
  defaults: DesktopDefaults,
  env: Record<string, string | undefined>,
): SettingsView {
  return {
    saved,
    running,
    defaultDataDir: defaults.dataDir,
    // The defaults of the next start: its data folder's own media folder.
    defaultMediaDirs: defaultMediaDirs(saved.data_dir || defaults.dataDir, defaults.videosDir),
    portFromEnv: parsePort(env.VC_PORT ?? '') !== null,
  };
}
