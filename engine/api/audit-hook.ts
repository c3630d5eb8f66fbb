import type { FastifyRequest } from 'fastify';
import type { AuditTrail } from '../audit/audit-trail';
import type { Clock } from '../clock';
import { LogThrottle } from '../log/throttle';
import type { Api } from './app';

/**
 * Names of the audited actions by method and route. A route that is not listed is audited all the
 * same, under its method and route: no new route can change anything unrecorded. null: not a
 * change, so not audited (each says why).
 */
export const AUDIT_ACTIONS: Readonly<Record<string, string | null>> = {
  'POST /api/auth/token': 'auth.login',
  'PUT /api/auth/password': 'auth.password_change',
  'POST /api/auth/logout': 'auth.logout',
  // Signing the console's picture and download links, a batch every few minutes: changes nothing.
  'POST /api/auth/link': null,
  'POST /api/task': 'task.start',
  'POST /api/task/:task_id/start-again': 'task.start_again',
  'PUT /api/task/:task_id': 'task.update',
  'DELETE /api/task/:task_id': 'task.close',
  'DELETE /api/task/:task_id/heatmap': 'task.heatmap_reset',
  'PUT /api/zapk/:zapk_id/app/:app_id': 'app.update',
  'POST /api/zapk': 'package.install',
  'POST /api/zapk/builtin/restore': 'package.restore_builtin',
  'DELETE /api/zapk/:zapk_id': 'package.uninstall',
  'PUT /api/settings/mqtt': 'settings.mqtt',
  'PUT /api/settings/callbacks': 'settings.callbacks',
  'POST /api/events/:event_id/redeliver': 'event.redeliver',
  'PUT /api/alarms/review': 'alarm.review',
  'POST /api/task/:task_id/optimization': 'optimization.start',
  'PUT /api/task/:task_id/optimization/:optimization_id/samples/:sample_id': 'optimization.judge',
  // A task's input, up to one upload a second each: its results are the events.
  'POST /api/task/:task_id/image': null,
  'POST /api/task/:task_id/diff_image': null,
  // Watching video: opens and closes encoders, changes nothing of a task or a setting.
  'POST /api/task/:task_id/ailive': null,
  'DELETE /api/task/:task_id/livestream/:stream': null,
  'POST /api/stream': null,
  'DELETE /api/stream/:stream_id': null,
};

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The API plugin's catch-all routes: an unknown path or method, answered 404 or 405. */
const UNKNOWN_PATHS = new Set(['/api', '/api/*']);
/** Ids an answer names, when the path has none (a task started, a package installed, a run begun). */
const ANSWER_IDS = ['task_id', 'zapk_id', 'optimization_id'] as const;
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_FIELDS = 32;
const MAX_USERNAME = 64;

interface Answer {
  code?: unknown;
  data?: Record<string, unknown>;
}

/**
 * Records every request of the API plugin that may change something (any method but GET, HEAD and
 * OPTIONS) by a signed-in user, and every login, in the audit trail before its answer leaves: who
 * (user, client address), what (action, route, target, the body's field names, never its values)
 * and how it ended (status, code). Requests without a valid token change nothing and are not
 * entries; they and logins refused by the limiter are logged, at most a line a minute per client.
 */
export function auditHooks(api: Api, trail: AuditTrail, clock: Clock): void {
  const answers = new WeakMap<FastifyRequest, Answer>();
  const refused = new LogThrottle<{ client: string; route: string; code: number }>(
    clock,
    (entry, repeats, windowMs) =>
      api.log.warn(
        { event: 'auth.refused', ...entry, ...(repeats > 0 && { repeats, window_s: windowMs / 1000 }) },
        repeats > 0
          ? `${repeats} more requests refused for their token or by the login limiter from ${entry.client}`
          : `request refused from ${entry.client}: ${entry.route} (${entry.code})`,
      ),
  );
  api.addHook('onClose', async () => refused.close());
  api.addHook('preSerialization', async (request, _reply, payload) => {
    if (actionOf(request) !== undefined && payload && typeof payload === 'object')
      answers.set(request, payload as Answer);
    return payload;
  });
  api.addHook('onSend', async (request, reply, payload) => {
    const action = actionOf(request);
    if (action === undefined) return payload;
    const answer = answers.get(request) ?? {};
    const code =
      typeof answer.code === 'number' ? answer.code : reply.statusCode < 400 ? 0 : reply.statusCode * 100;
    const route = routeOf(request);
    const isLogin = request.routeOptions.config.public === true;
    if (request.username === undefined && (!isLogin || reply.statusCode === 429)) {
      refused.line(request.ip, { client: request.ip, route, code });
      return payload;
    }
    trail.record({
      username: isLogin ? loginName(request.body) : (request.username ?? null),
      client: request.ip,
      action,
      route,
      target: targetOf(request.params, answer.data),
      outcome: reply.statusCode < 400 ? 'ok' : 'failed',
      status: reply.statusCode,
      code,
      fields: fieldNames(request.body),
      detail: detailOf(answer.data),
    });
    return payload;
  });
}

/** The request's audit action; undefined when it is not audited. */
function actionOf(request: FastifyRequest): string | undefined {
  const url = request.routeOptions.url;
  if (READS.has(request.method) || url === undefined || UNKNOWN_PATHS.has(url)) return undefined;
  // One route, two verbs: DELETE closes a task, or with ?purge=true removes a closed one for good.
  if (
    routeOf(request) === 'DELETE /api/task/:task_id' &&
    (request.query as { purge?: unknown }).purge === true
  )
    return 'task.purge';
  const name = AUDIT_ACTIONS[routeOf(request)];
  return name === null ? undefined : (name ?? routeOf(request));
}

const routeOf = (request: FastifyRequest) => `${request.method} ${request.routeOptions.url}`;

/** The name a login tried, as given (never the password); null when the body had none. */
function loginName(body: unknown): string | null {
  const username = (body as { username?: unknown } | undefined)?.username;
  return typeof username === 'string' ? username.slice(0, MAX_USERNAME) : null;
}

function targetOf(params: unknown, data: Record<string, unknown> | undefined): string | null {
  const ids = Object.values((params ?? {}) as Record<string, unknown>).filter(
    (value): value is string => typeof value === 'string',
  );
  if (ids.length > 0) return ids.join('/');
  const named = ANSWER_IDS.map((key) => data?.[key]).find(
    (value) => typeof value === 'string' && value !== '',
  );
  return (named as string | undefined) ?? null;
}

/** The names of a JSON body's top-level fields (those that look like field names), sorted. */
function fieldNames(body: unknown): string[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [];
  return Object.keys(body)
    .filter((name) => FIELD_NAME.test(name))
    .slice(0, MAX_FIELDS)
    .sort();
}

/** A package change: what it was and to which version. */
function detailOf(data: Record<string, unknown> | undefined): string | null {
  return typeof data?.change === 'string' && typeof data.version === 'string'
    ? `${data.change} ${data.version}`
    : null;
}
