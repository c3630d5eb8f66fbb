import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU and memory of processes by pid, read from Linux's /proc (0 elsewhere and once a process is gone):
 * GET /api/system and the benchmarks count the inference hosts as the engine's own work this way.
 */

/** CPU seconds (user + system) of a process, from /proc; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  return (cpuMsOf(pid) ?? 0) / 1000;
}

/** CPU milliseconds (user + system) of a process and all its threads, from /proc; null where unreadable. */
export function cpuMsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : null;
  } catch {
    return null;
  }
}

/** Resident memory of a process in bytes, from /proc; 0 once it is gone. */
export function rssBytes(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** The direct children of a process (the engine's ffmpeg processes and inference hosts). */
export function childPids(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * The engine's children split into its inference hosts, which count as the engine's own work (they
 * were threads of it before they became processes), and the rest (ffmpeg).
 */
export function engineChildren(pid: number): { hosts: number[]; ffmpegs: number[] } {
  const hosts: number[] = [];
  const ffmpegs: number[] = [];
  for (const child of childPids(pid)) (isInferenceHost(child) ? hosts : ffmpegs).push(child);
  return { hosts, ffmpegs };
}

function isInferenceHost(pid: number): boolean {
  try {
    return /inference[/-](worker|host)/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}
