import { type ChildProcess, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Stops a child process (SIGTERM unless told) and waits for it to exit; nothing to do once it has. */
export async function terminate(
  child: ChildProcess | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((done) => {
    child.once('exit', () => done());
    child.kill(signal);
  });
}

/** Whether a process with this id exists (signal 0 checks without sending anything). */
export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The ffmpeg processes a process runs (the engine: one per stream it reads or encodes). */
export function ffmpegChildrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid), 'ffmpeg'])
      .toString()
      .trim()
      .split('\n')
      .map(Number);
  } catch {
    // pgrep exits 1 when nothing matches.
    return [];
  }
}

/** Pids of the inference processes (hosts and checks) among a process's children. */
export function inferenceChildren(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
  } catch {
    return [];
  }
  return children.filter((child) => {
    try {
      return /inference|worker\.ts/.test(readFileSync(`/proc/${child}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  });
}
