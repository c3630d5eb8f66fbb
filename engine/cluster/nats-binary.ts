import { accessSync, constants } from 'node:fs';
import { NATS_SERVER_ENV } from '../contract/engine-process';

/**
 * The NATS server binary this engine was given (VC_NATS_SERVER: the one the desktop app ships in its
 * resources, or one an operator names), null when none was or it is not an executable file. The
 * engine does not run it: a site runs its NATS servers as services (docs/cluster.md); GET /api/system
 * reports its version, so an operator sees whether this install brings one at or above the floor.
 */
export function findNatsServer(env: NodeJS.ProcessEnv = process.env): string | null {
  const path = env[NATS_SERVER_ENV];
  if (!path) return null;
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return null;
  }
}

/** The version a `nats-server --version` line names ("nats-server: v2.10.27"), or null. */
export function natsServerVersion(output: string): string | null {
  return /\bv(\d+\.\d+\.\d+\S*)/.exec(output)?.[1] ?? null;
}
