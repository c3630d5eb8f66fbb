/**
 * Typed engine endpoints used by the screens (service-interface.md 4.2, 4.5, 4.6 and
 * api-decisions.md). Only what the console reads is typed; unknown extra fields are ignored.
 */
import { apiPath, type Transport } from './transport';

export interface ZapkApp {
  app_id: string;
  name: string;
  /** 1 detection, 2 change detection, 3 time-series. */
  type?: number;
  /** Unix seconds. */
  license_expire: number;
  perpetual: boolean;
  rule: unknown;
}

export interface ZapkPackage {
  zapk_id: string;
  name: string;
  version?: string;
  builtin?: boolean;
  /** Keyed by app_id (api-decisions.md); a list is tolerated too. */
  apps: Record<string, ZapkApp> | ZapkApp[];
}

export type TaskMode = 'video' | 'image' | 'diff';

export interface Task {
  task_id: string;
  mode?: TaskMode;
  zapk_id: string;
  app_ids: string[];
  device_id?: string;
  business_id?: string;
  video_url?: string;
  report_url?: string;
  /** 0 while running; 1..5 why it ended (api-decisions.md 4.4 - 4.7). */
  close_code?: number;
  dump?: string;
}

export async function listPackages(transport: Transport, signal?: AbortSignal): Promise<ZapkPackage[]> {
  const envelope = await transport.request<ZapkPackage[]>(
    'GET',
    '/api/zapk',
    undefined,
    signal ? { signal } : {},
  );
  return Array.isArray(envelope.data) ? envelope.data : [];
}

export async function listTasks(transport: Transport, signal?: AbortSignal): Promise<Task[]> {
  const envelope = await transport.request<Task[]>('GET', '/api/tasks', undefined, signal ? { signal } : {});
  return Array.isArray(envelope.data) ? envelope.data : [];
}

export async function closeTask(transport: Transport, taskId: string): Promise<void> {
  await transport.request<unknown>('DELETE', apiPath`/api/task/${taskId}`);
}

export function appsOf(pkg: ZapkPackage): ZapkApp[] {
  return Array.isArray(pkg.apps) ? pkg.apps : Object.values(pkg.apps ?? {});
}

export type LicenseState =
  | { kind: 'perpetual' }
  | { kind: 'expires'; expiresAt: number }
  | { kind: 'expired' };

/** License of an application at `nowMs`: perpetual, expires on license_expire (Unix s), or expired. */
export function licenseState(
  app: Pick<ZapkApp, 'perpetual' | 'license_expire'>,
  nowMs: number,
): LicenseState {
  if (app.perpetual) return { kind: 'perpetual' };
  if (!Number.isFinite(app.license_expire) || app.license_expire * 1000 <= nowMs) return { kind: 'expired' };
  return { kind: 'expires', expiresAt: app.license_expire };
}

/** Whether a task still runs (close_code 0 or absent). */
export function isRunning(task: Pick<Task, 'close_code'>): boolean {
  return task.close_code === undefined || task.close_code === 0;
}
