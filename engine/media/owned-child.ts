import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

const SETPRIV = '/usr/bin/setpriv';

let setprivUsable: boolean | undefined;
function canUseSetpriv(): boolean {
  if (setprivUsable === undefined) {
    try {
      accessSync(SETPRIV, constants.X_OK);
      setprivUsable = process.platform === 'linux';
    } catch {
      setprivUsable = false;
    }
  }
  return setprivUsable;
}

/**
 * Spawns a helper process (ffmpeg) that must not outlive the engine. On Linux it starts through
 * setpriv with a parent-death signal, so even a kill -9 of the engine takes the child with it;
 * elsewhere the engine's own shutdown and a broken stdout pipe end it.
 */
export function spawnOwned(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  if (canUseSetpriv()) return spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args], options);
  return spawn(command, [...args], options);
}
