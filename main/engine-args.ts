/**
 * The command line main starts the engine process with (the flags of engine/cli.ts, the entry that
 * `npm run engine` runs): what startEngine was given in-process before the engine had a process of its own.
 * Written from the engine's configuration schema, which refuses a value the engine would refuse
 * before the process is started.
 */
import { configArgs } from '../engine/contract/config';
import type { DesktopSettings } from './settings';

export interface EngineLaunch {
  settings: DesktopSettings;
  /** The port to listen on now: the last run's after a restart, else the settings' (0 = any free one). */
  port: number | undefined;
  /** Origin of the console page, which loads its HLS video from the engine. */
  appOrigin: string;
  /** The built console, served to the LAN when the operator exposes the engine there; null = API only. */
  consoleDir: string | null;
  builtinDir: string;
}

export function engineArgs(launch: EngineLaunch): string[] {
  return configArgs({
    host: launch.settings.host,
    port: launch.port ?? launch.settings.port,
    data_dir: launch.settings.dataDir,
    allowed_origins: [launch.appOrigin],
    console_dir: launch.consoleDir ?? '',
    builtin_dir: launch.builtinDir,
    log_level: 'info',
    // The folders file sources may come from (the settings' media folders); never none, or the
    // engine would take media_dirs from the data folder's settings.json instead.
    media_dirs: launch.settings.mediaDirs,
  });
}
