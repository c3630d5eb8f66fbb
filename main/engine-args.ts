/**
 * The command line main starts the engine process with (the flags of engine/cli.ts, the entry that
 * `npm run engine` runs): what startEngine was given in-process before the engine had a process of its own.
 */
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
  return [
    '--host',
    launch.settings.host,
    '--port',
    String(launch.port ?? launch.settings.port),
    '--data-dir',
    launch.settings.dataDir,
    '--allowed-origins',
    launch.appOrigin,
    '--console-dir',
    launch.consoleDir ?? '',
    '--builtin-dir',
    launch.builtinDir,
    '--log-level',
    'info',
    // The folders file sources may come from (the settings' media folders); never none, or the
    // engine would take media_dirs from the data folder's settings.json instead.
    ...launch.settings.mediaDirs.flatMap((dir) => ['--media-dir', dir]),
  ];
}
