import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const MB = 1024 * 1024;

/** A process's resident memory now and at its peak so far (VmRSS, VmHWM), in bytes. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/**
 * Kills the process (SIGKILL) once its resident memory passes `limit`: a test of memory bounds run
 * against code without them must fail without taking the shared machine down. `killed` says why
 * it had to, once it had.
 */
export function killAbove(
  child: ChildProcess,
  limit: number,
): { readonly killed: string | null; stop(): void } {
  let killed: string | null = null;
  const timer = setInterval(() => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const { rss } = memoryOf(child.pid);
    // NaN once the process is a zombie (no memory lines left).
    if (!(rss > limit)) return;
    killed = `killed at ${Math.round(rss / MB)} MB resident, over the ${Math.round(limit / MB)} MB guard`;
    child.kill('SIGKILL');
  }, 20);
  return {
    get killed() {
      return killed;
    },
    stop: () => clearInterval(timer),
  };
}
