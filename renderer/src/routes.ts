/**
 * The console's addresses. Hash history (#/live/<task>): the engine serves the console at / and the
 * desktop app at app://console/index.html, and neither needs a fallback for a hash, so a link opened
 * in a new tab or after a reload lands on the same screen. Pure: builds and reads paths.
 */

export type Screen =
  | 'wall'
  | 'alarms'
  | 'packages'
  | 'tasks'
  | 'live'
  | 'optimization'
  | 'events'
  | 'images'
  | 'system'
  | 'settings';

const part = (value: string | number) => encodeURIComponent(String(value));

export const paths = {
  wall: '/wall',
  alarms: '/alarms',
  packages: '/packages',
  tasks: '/tasks',
  /** A task: the table with that task's editor open. */
  task: (taskId: string) => `/tasks/${part(taskId)}`,
  live: (taskId?: string | null) => (taskId ? `/live/${part(taskId)}` : '/live'),
  optimization: (taskId?: string | null, runId?: string | null) =>
    taskId ? `/optimization/${part(taskId)}${runId ? `/${part(runId)}` : ''}` : '/optimization',
  events: '/events',
  /** A stored event (its task and seq), with one of its rules' snapshot shown. */
  event: (taskId: string, seq: number, ruleId?: string) =>
    `/events/${part(taskId)}/${seq}${ruleId ? `/${part(ruleId)}` : ''}`,
  images: (taskId?: string | null) => (taskId ? `/images/${part(taskId)}` : '/images'),
  system: '/system',
  settings: '/settings',
} as const;

/** The screen a path shows (the header marks it); null for an unknown path. */
export function screenOf(path: string): Screen | null {
  const first = path.split('/')[1] ?? '';
  const screens: readonly Screen[] = [
    'wall',
    'alarms',
    'packages',
    'tasks',
    'live',
    'optimization',
    'events',
    'images',
    'system',
    'settings',
  ];
  return screens.find((screen) => screen === first) ?? null;
}

/** A path parameter as written (the router hands them over still percent-encoded); null when absent. */
export function param(value: string | undefined): string | null {
  if (value === undefined || value === '') return null;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** An event's seq from its path; null unless a positive integer. */
export function seqParam(value: string | undefined): number | null {
  const seq = Number(value);
  return Number.isInteger(seq) && seq > 0 ? seq : null;
}
