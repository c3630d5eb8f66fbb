/**
 * The NATS server the desktop build ships (electron-builder.yml: extraResources from
 * build/nats/<os>-<arch>, put there by scripts/desktop-nats.ts) and where the app finds it. Kept free
 * of Electron's modules: main passes what it reads from them (app.isPackaged, process.resourcesPath,
 * app.getAppPath()), and the tests stand in for them.
 */
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

/** electron-builder's ${os} of a platform: the folder scripts/desktop-nats.ts fills for it. */
const BUILDER_OS: Partial<Record<NodeJS.Platform, string>> = { linux: 'linux', darwin: 'mac', win32: 'win' };

/** The binary's file name on a platform. */
export const natsServerFile = (platform: NodeJS.Platform) =>
  platform === 'win32' ? 'nats-server.exe' : 'nats-server';

/**
 * Where the build takes the binary from for a platform and architecture, relative to the repository;
 * null for a platform the desktop is not built for.
 */
export function natsBuildDir(platform: NodeJS.Platform, arch: string): string | null {
  const os = BUILDER_OS[platform];
  return os ? join('build', 'nats', `${os}-${arch}`) : null;
}

/** Where the installed app keeps it: resources/nats/ (electron-builder's `to`). */
export const NATS_RESOURCE_DIR = 'nats';

export interface AppPlace {
  /** Electron's app.isPackaged. */
  isPackaged: boolean;
  /** Electron's process.resourcesPath. */
  resourcesPath: string;
  /** Electron's app.getAppPath(): the repository in development. */
  appPath: string;
  platform: NodeJS.Platform;
  arch: string;
}

/**
 * The NATS server binary the app brings, or null when it brings none (a build made without one, or a
 * development checkout where scripts/desktop-nats.ts has not run): the app starts all the same, as a
 * single workstation; only the engine's report of it (GET /api/system) says none.
 */
export function bundledNatsServer(place: AppPlace): string | null {
  const file = natsServerFile(place.platform);
  const buildDir = natsBuildDir(place.platform, place.arch);
  const path = place.isPackaged
    ? join(place.resourcesPath, NATS_RESOURCE_DIR, file)
    : buildDir && join(place.appPath, buildDir, file);
  if (!path) return null;
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return null;
  }
}
