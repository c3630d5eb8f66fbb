/**
 * Desktop settings: where the in-process engine listens. Pure (the caller reads the file), so it is
 * unit-tested without Electron.
 *
 * Order: the VC_PORT environment variable, then "port" in the engine's settings file
 * (<userData>/data/settings.json, the same file the headless engine reads from its data dir), else 0:
 * an ephemeral port chosen by the OS, so two installs (or a headless engine on 8080) never clash.
 * The host is always 127.0.0.1: the desktop engine is never exposed on the LAN ("host" is ignored).
 */

export const DESKTOP_HOST = '127.0.0.1';

export interface DesktopSettings {
  port: number;
}

/** A TCP port 0..65535 given as a number or decimal text; anything else is null. */
export function parsePort(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (!/^\d{1,5}$/.test(text)) return null;
  const port = Number(text);
  return port <= 65535 ? port : null;
}

/**
 * Resolves the settings from the environment and the settings file's text (undefined when there is
 * no file). Problems never stop the app: they are returned as warnings and the default is used.
 */
export function resolveSettings(
  env: Record<string, string | undefined>,
  settingsText: string | undefined,
): { settings: DesktopSettings; warnings: string[] } {
  const warnings: string[] = [];
  let filePort: number | null = null;
  if (settingsText !== undefined) {
    try {
      const parsed: unknown = JSON.parse(settingsText);
      if (parsed && typeof parsed === 'object' && 'port' in parsed) {
        filePort = parsePort((parsed as { port: unknown }).port);
        if (filePort === null) warnings.push('settings.json: port must be an integer 0..65535; using 0');
      }
    } catch {
      warnings.push('settings.json is not valid JSON; using defaults');
    }
  }
  if (env.VC_PORT !== undefined && env.VC_PORT !== '') {
    const envPort = parsePort(env.VC_PORT);
    if (envPort !== null) return { settings: { port: envPort }, warnings };
    warnings.push('VC_PORT must be an integer 0..65535; ignored');
  }
  return { settings: { port: filePort ?? 0 }, warnings };
}
