/**
 * Typed engine endpoints used by the screens (service-interface.md part 4, api-decisions.md and the
 * extensions of docs/api.md). Shapes come from the engine's own schemas where one exists.
 */
import type { Static } from '@sinclair/typebox';
import type {
  AlarmFacets,
  AlarmPage,
  AlarmQuery,
  AlarmView,
  AppConfig,
  AppUpdateBody,
  AuditEntry,
  AuditPage,
  Clip,
  ClipSettings,
  ClipUsage,
  DeliveryRecord,
  EventItem,
  IgnoreBody,
  IgnoreProposal,
  IgnoreResult,
  ImageResult,
  OptimizationBody,
  OptimizationView,
  Osd,
  PasswordChange,
  PasswordReset,
  Proposal,
  ReviewItem,
  ReviewItemDetail,
  ReviewItemPage,
  ReviewFilter as ReviewItemQuery,
  SampleJudgement,
  SampleListQuery,
  SamplePage,
  SampleReason,
  SampleView,
  SiteView,
  StartTaskBody,
  SystemInfo,
  TaskCounts,
  TaskListQuery,
  TaskMode,
  TaskSummary,
  TaskView,
  Timeline,
  UpdateTaskBody,
  Verdict,
} from '../../engine/contract';
import { CLOSE_CODE } from '../../engine/contract';
import { apiPath, type Transport } from './transport';

export type {
  AlarmFacets,
  AlarmPage,
  AlarmQuery,
  AlarmView,
  AppConfig,
  AuditEntry,
  AuditPage,
  Clip,
  ClipSettings,
  ClipUsage,
  DeliveryRecord,
  EventItem,
  IgnoreProposal,
  ImageResult,
  OptimizationView,
  Osd,
  Proposal,
  ReviewItem,
  ReviewItemDetail,
  ReviewItemPage,
  ReviewItemQuery,
  SampleJudgement,
  SamplePage,
  SampleReason,
  SampleView,
  SiteView,
  StartTaskBody,
  SystemInfo,
  TaskMode,
  Timeline,
  UpdateTaskBody,
  Verdict,
};

export interface ZapkApp {
  app_id: string;
  name: string;
  /** 1 detection, 2 change detection, 3 time-series. */
  type?: number;
  /** Unix seconds. */
  license_expire: number;
  perpetual: boolean;
  rule: unknown;
  /** Extension: the labels of the app's model; a class_id is a label's index. */
  labels?: string[];
}

export interface ZapkPackage {
  zapk_id: string;
  name: string;
  version?: string;
  builtin?: boolean;
  /** Keyed by app_id (api-decisions.md); a list is tolerated too. */
  apps: Record<string, ZapkApp> | ZapkApp[];
}

/** A whole task as GET /api/task/{task_id} answers it (2.7 with extensions), areas included. */
export type Task = TaskView;

/** A task as the listing shows it: every field but its areas (app_configs). */
export type { TaskSummary };

/** The listing's paging and filters (docs/api.md 4.5). */
export type TaskFilter = Omit<TaskListQuery, 'with_areas'>;

const withSignal = (signal?: AbortSignal) => (signal ? { signal } : {});

/** A query's given fields (those left undefined mean "any"). */
const given = (query: object) =>
  Object.fromEntries(
    Object.entries(query).filter(
      (entry): entry is [string, string | number | boolean] => entry[1] !== undefined,
    ),
  );

export async function listPackages(transport: Transport, signal?: AbortSignal): Promise<ZapkPackage[]> {
  const envelope = await transport.request<ZapkPackage[]>('GET', '/api/zapk', undefined, withSignal(signal));
  return Array.isArray(envelope.data) ? envelope.data : [];
}

export async function updateApp(
  transport: Transport,
  zapkId: string,
  appId: string,
  body: Static<typeof AppUpdateBody>,
): Promise<void> {
  await transport.request('PUT', apiPath`/api/zapk/${zapkId}/app/${appId}`, body);
}

export async function uninstallPackage(transport: Transport, zapkId: string): Promise<void> {
  await transport.request('DELETE', apiPath`/api/zapk/${zapkId}`);
}

/** One page of the listing, without areas: what the console's tables, wall and pickers show. */
export async function listTasks(
  transport: Transport,
  filter: TaskFilter = {},
  signal?: AbortSignal,
): Promise<TaskSummary[]> {
  const query = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined));
  const envelope = await transport.request<TaskSummary[]>('GET', '/api/tasks', undefined, {
    query,
    ...withSignal(signal),
  });
  return Array.isArray(envelope.data) ? envelope.data : [];
}

export async function getTask(transport: Transport, taskId: string, signal?: AbortSignal): Promise<Task> {
  return (await transport.request<Task>('GET', apiPath`/api/task/${taskId}`, undefined, withSignal(signal)))
    .data;
}

/** `signal` stops the wait while the source opens; the engine then drops the start. */
export async function startTask(
  transport: Transport,
  body: StartTaskBody,
  signal?: AbortSignal,
): Promise<string> {
  return (await transport.request<{ task_id: string }>('POST', '/api/task', body, { signal })).data.task_id;
}

/** Starts a new task with a closed task's settings (extension); the new task's id. */
export async function startTaskAgain(transport: Transport, taskId: string): Promise<string> {
  return (await transport.request<{ task_id: string }>('POST', apiPath`/api/task/${taskId}/start-again`)).data
    .task_id;
}

export async function updateTask(transport: Transport, taskId: string, body: UpdateTaskBody): Promise<Task> {
  return (await transport.request<Task>('PUT', apiPath`/api/task/${taskId}`, body)).data;
}

export async function closeTask(transport: Transport, taskId: string): Promise<void> {
  await transport.request<unknown>('DELETE', apiPath`/api/task/${taskId}`);
}

/** Removes a closed task from the listing now (its undelivered events still go out). */
export async function purgeTask(transport: Transport, taskId: string): Promise<void> {
  await transport.request<unknown>('DELETE', apiPath`/api/task/${taskId}`, undefined, {
    query: { purge: true },
  });
}

/** The heatmap of a running video task (extension E.13b) as PNG: for an <img>, through engineLink. */
export const heatmapPath = (taskId: string): string => apiPath`/api/task/${taskId}/heatmap`;

export async function resetHeatmap(transport: Transport, taskId: string): Promise<void> {
  await transport.request('DELETE', apiPath`/api/task/${taskId}/heatmap`);
}

/** A running task's line crossings and zone occupancy (extension E.13a). */
export async function getTaskCounts(
  transport: Transport,
  taskId: string,
  signal?: AbortSignal,
): Promise<TaskCounts> {
  return (
    await transport.request<TaskCounts>(
      'GET',
      apiPath`/api/task/${taskId}/counts`,
      undefined,
      withSignal(signal),
    )
  ).data;
}

/** data of 4.10 (api-decisions.md). */
export interface AiLive {
  stream: string;
  hls_url: string;
  rtmp: string;
}

/** A smaller AI video than the source's (a wall's tile): its width in px and kbit/s (4.10 extension). */
export interface VideoScale {
  width: number;
  bitrate: number;
}

export async function startAiLive(
  transport: Transport,
  taskId: string,
  appIds: string[],
  scale?: VideoScale,
): Promise<AiLive> {
  return (
    await transport.request<AiLive>('POST', apiPath`/api/task/${taskId}/ailive`, {
      app_ids: appIds,
      ...scale,
    })
  ).data;
}

export async function closeAiLive(transport: Transport, taskId: string, stream: string): Promise<void> {
  await transport.request('DELETE', apiPath`/api/task/${taskId}/livestream/${stream}`);
}

/** data of 4.12 (api-decisions.md). */
export interface Preview {
  stream_id: string;
  hls_url: string;
  width: number;
  height: number;
}

/** `signal` stops the wait; the engine then drops the probe (its client went away). */
export async function startPreview(
  transport: Transport,
  videoUrl: string,
  signal?: AbortSignal,
): Promise<Preview> {
  return (await transport.request<Preview>('POST', '/api/stream', { video_url: videoUrl }, { signal })).data;
}

export async function closePreview(transport: Transport, streamId: string): Promise<void> {
  await transport.request('DELETE', apiPath`/api/stream/${streamId}`);
}

/** The fragmented MP4 sockets (extensions) of an AI video and of a preview. */
export const aiVideoSocket = (taskId: string, stream: string): string =>
  apiPath`/api/task/${taskId}/livestream/${stream}/socket`;
export const previewSocket = (streamId: string): string => apiPath`/api/stream/${streamId}/socket`;

export interface ImageOptions {
  device_id?: string;
  enhance?: 0 | 1;
}

const imageQuery = (options: ImageOptions) => {
  const query: Record<string, string | number> = {};
  if (options.device_id) query.device_id = options.device_id;
  if (options.enhance) query.enhance = options.enhance;
  return query;
};

/** 4.8 with the image as base64 JSON: the one body form both transports carry. */
export async function uploadImage(
  transport: Transport,
  taskId: string,
  image: string,
  options: ImageOptions = {},
): Promise<ImageResult> {
  const path = apiPath`/api/task/${taskId}/image`;
  return (await transport.request<ImageResult>('POST', path, { image }, { query: imageQuery(options) })).data;
}

/** 4.9; without image_a the task's previous image_b is the reference. */
export async function uploadDiff(
  transport: Transport,
  taskId: string,
  images: { image_a?: string; image_b: string },
  options: ImageOptions = {},
): Promise<ImageResult> {
  const path = apiPath`/api/task/${taskId}/diff_image`;
  return (await transport.request<ImageResult>('POST', path, images, { query: imageQuery(options) })).data;
}

export interface EventPage {
  task_id: string;
  last_seq: number;
  next_after_seq: number | null;
  items: EventItem[];
}

export async function taskEvents(
  transport: Transport,
  taskId: string,
  query: { after_seq?: number; limit?: number; with_body?: boolean },
  signal?: AbortSignal,
): Promise<EventPage> {
  return (
    await transport.request<EventPage>('GET', apiPath`/api/task/${taskId}/events`, undefined, {
      query,
      ...(signal && { signal }),
    })
  ).data;
}

export async function redeliver(transport: Transport, eventId: string): Promise<DeliveryRecord> {
  return (await transport.request<DeliveryRecord>('POST', apiPath`/api/events/${eventId}/redeliver`)).data;
}

/** Body of 4.13 (start an effect optimization run). */
export type OptimizationStart = Static<typeof OptimizationBody>;

export async function startOptimization(
  transport: Transport,
  taskId: string,
  body: OptimizationStart,
): Promise<string> {
  const path = apiPath`/api/task/${taskId}/optimization`;
  return (await transport.request<{ optimization_id: string }>('POST', path, body)).data.optimization_id;
}

/** The task's optimization runs, oldest first (extension of 4.13). */
export async function listOptimizations(
  transport: Transport,
  taskId: string,
  signal?: AbortSignal,
): Promise<OptimizationView[]> {
  const path = apiPath`/api/task/${taskId}/optimizations`;
  const envelope = await transport.request<OptimizationView[]>('GET', path, undefined, withSignal(signal));
  return Array.isArray(envelope.data) ? envelope.data : [];
}

/** One page of a run's samples in sample_id order. */
export async function listSamples(
  transport: Transport,
  taskId: string,
  optimizationId: string,
  query: Static<typeof SampleListQuery>,
  signal?: AbortSignal,
): Promise<SamplePage> {
  const path = apiPath`/api/task/${taskId}/optimization/${optimizationId}/samples`;
  // An absent filter must not reach the query string as "undefined".
  const given = Object.fromEntries(
    Object.entries(query).filter((entry): entry is [string, string | number] => entry[1] !== undefined),
  );
  return (
    await transport.request<SamplePage>('GET', path, undefined, { query: given, ...withSignal(signal) })
  ).data;
}

export async function judgeSample(
  transport: Transport,
  taskId: string,
  optimizationId: string,
  sampleId: number,
  judgement: SampleJudgement,
): Promise<SampleView> {
  const path = apiPath`/api/task/${taskId}/optimization/${optimizationId}/samples/${sampleId}`;
  return (await transport.request<SampleView>('PUT', path, judgement)).data;
}

export interface MqttSettings {
  enabled: boolean;
  url: string;
  client_id: string;
  username: string;
  password_set: boolean;
  topic: string;
  tls: { reject_unauthorized: boolean; ca: string };
  status: { connected: boolean; last_error: string | null; backlog: number };
}

/** What a connection test said (POST /api/settings/mqtt/test). */
export interface MqttTestResult {
  ok: boolean;
  outcome: 'connected' | 'refused' | 'unreachable' | 'timeout' | 'bad_credentials' | 'tls' | 'busy' | 'error';
  detail: string | null;
  elapsed_ms: number;
}

/** Connects once with the entered settings (the stored password serves the same broker); saves nothing. */
export async function testMqtt(transport: Transport, body: Record<string, unknown>): Promise<MqttTestResult> {
  return (await transport.request<MqttTestResult>('POST', '/api/settings/mqtt/test', body)).data;
}

export interface CallbackSettings {
  default_report_url: string;
}

export async function getCallbacks(transport: Transport, signal?: AbortSignal): Promise<CallbackSettings> {
  return (
    await transport.request<CallbackSettings>('GET', '/api/settings/callbacks', undefined, withSignal(signal))
  ).data;
}

export async function putCallbacks(transport: Transport, body: CallbackSettings): Promise<CallbackSettings> {
  return (await transport.request<CallbackSettings>('PUT', '/api/settings/callbacks', body)).data;
}

export async function getMqtt(transport: Transport, signal?: AbortSignal): Promise<MqttSettings> {
  return (await transport.request<MqttSettings>('GET', '/api/settings/mqtt', undefined, withSignal(signal)))
    .data;
}

export async function putMqtt(transport: Transport, body: Record<string, unknown>): Promise<MqttSettings> {
  return (await transport.request<MqttSettings>('PUT', '/api/settings/mqtt', body)).data;
}

/**
 * The web console changes the password given the current one; the desktop console's main process,
 * which holds no password, resets it after its own confirmation and takes the new password alone.
 */
export async function changePassword(
  transport: Transport,
  body: Static<typeof PasswordChange> | Static<typeof PasswordReset>,
): Promise<void> {
  await transport.request('PUT', '/api/auth/password', body);
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

/** Whether a task still runs (close_code 0). */
export function isRunning(task: Pick<Task, 'close_code'>): boolean {
  return task.close_code === CLOSE_CODE.running;
}

/** The task modes an application type can run in (docs/api.md 4.4). */
export function modesOfType(type: number | undefined): TaskMode[] {
  if (type === 1) return ['video', 'image'];
  if (type === 2) return ['diff'];
  if (type === 3) return ['video'];
  return [];
}

/** A file's bytes as standard base64 (the JSON body form of image uploads). */
export async function fileToBase64(file: Blob): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

/** The engine's own figures (GET /api/system, docs/api.md). */
export async function getSystem(transport: Transport, signal?: AbortSignal): Promise<SystemInfo> {
  return (await transport.request<SystemInfo>('GET', '/api/system', undefined, withSignal(signal))).data;
}

/** The site this engine is a node of, or `{enabled: false}` on a single workstation (GET /api/cluster). */
export async function getCluster(transport: Transport, signal?: AbortSignal): Promise<SiteView> {
  return (await transport.request<SiteView>('GET', '/api/cluster', undefined, withSignal(signal))).data;
}

/** The newest entries of the audit trail: who changed what (GET /api/audit, docs/api.md E.16). */
export async function listAudit(
  transport: Transport,
  limit: number,
  signal?: AbortSignal,
): Promise<AuditPage> {
  return (
    await transport.request<AuditPage>('GET', '/api/audit', undefined, {
      query: { limit },
      ...withSignal(signal),
    })
  ).data;
}

/** Stored alarms, filtered and paged (GET /api/alarms, docs/api.md E.14). */
export async function listAlarms(
  transport: Transport,
  query: AlarmQuery,
  signal?: AbortSignal,
): Promise<AlarmPage> {
  return (
    await transport.request<AlarmPage>('GET', '/api/alarms', undefined, {
      query: given(query),
      ...withSignal(signal),
    })
  ).data;
}

export async function alarmFacets(transport: Transport, signal?: AbortSignal): Promise<AlarmFacets> {
  return (await transport.request<AlarmFacets>('GET', '/api/alarms/facets', undefined, withSignal(signal)))
    .data;
}

/** What "ignore this object here" drops on the camera: the item's classes, or a mask around it. */
export type IgnoreKind = IgnoreBody['kind'];

/** Review items, newest first, filtered and paged like the alarms (GET /api/review/items). */
export async function listReviewItems(
  transport: Transport,
  query: ReviewItemQuery & { before?: number; limit?: number },
  signal?: AbortSignal,
): Promise<ReviewItemPage> {
  return (
    await transport.request<ReviewItemPage>('GET', '/api/review/items', undefined, {
      query: given(query),
      ...withSignal(signal),
    })
  ).data;
}

export async function getReviewItem(
  transport: Transport,
  itemId: string,
  signal?: AbortSignal,
): Promise<ReviewItemDetail> {
  return (
    await transport.request<ReviewItemDetail>(
      'GET',
      apiPath`/api/review/items/${itemId}`,
      undefined,
      withSignal(signal),
    )
  ).data;
}

/** Marks the items named, or every item the filter shows, reviewed (or not); the engine's count. */
export async function reviewItems(
  transport: Transport,
  target: { itemIds: string[] } | { filter: ReviewItemQuery },
  reviewed: boolean,
): Promise<number> {
  const body =
    'itemIds' in target ? { item_ids: target.itemIds, reviewed } : { filter: given(target.filter), reviewed };
  return (await transport.request<{ updated: number }>('POST', '/api/review/items/review', body)).data
    .updated;
}

export async function reviewTimeline(
  transport: Transport,
  query: { task_id: string; since: number; until: number },
  signal?: AbortSignal,
): Promise<Timeline> {
  return (
    await transport.request<Timeline>('GET', '/api/review/timeline', undefined, {
      query,
      ...withSignal(signal),
    })
  ).data;
}

export async function ignoreItem(
  transport: Transport,
  itemId: string,
  kind: IgnoreKind,
  apply: boolean,
): Promise<IgnoreResult> {
  return (
    await transport.request<IgnoreResult>('POST', apiPath`/api/review/items/${itemId}/ignore`, {
      kind,
      apply,
    })
  ).data;
}

export async function clipInfo(transport: Transport, clipId: string, signal?: AbortSignal): Promise<Clip> {
  return (
    await transport.request<Clip>('GET', apiPath`/api/clips/${clipId}/info`, undefined, withSignal(signal))
  ).data;
}

/** Cuts the last `seconds` the camera's buffer holds into a clip of its own ("Save clip"). */
export async function saveClip(transport: Transport, taskId: string, seconds: number): Promise<Clip> {
  return (await transport.request<Clip>('POST', apiPath`/api/task/${taskId}/clip`, { seconds })).data;
}

export async function getClipSettings(transport: Transport, signal?: AbortSignal): Promise<ClipSettings> {
  return (await transport.request<ClipSettings>('GET', '/api/settings/clips', undefined, withSignal(signal)))
    .data;
}

export async function putClipSettings(
  transport: Transport,
  body: Partial<ClipSettings>,
): Promise<ClipSettings> {
  return (await transport.request<ClipSettings>('PUT', '/api/settings/clips', body)).data;
}
