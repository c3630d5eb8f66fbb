import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditRepository } from '../engine/audit/audit-repository';
import type { AuditEntry, AuditPage } from '../engine/audit/audit-schema';
import { AuditTrail } from '../engine/audit/audit-trail';
import { ManualClock } from '../engine/clock';
import { ERRORS } from '../engine/contract/errors';
import { createEngineLogger } from '../engine/log/logger';
import { openDb } from '../engine/store/db';
import { ADMIN_PASSWORD, type Answer, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { Mosquitto } from './helpers/mosquitto';

/**
 * The audit trail and the engine log of a real engine (in process, real SQLite, a real mosquitto
 * broker, a real video task): each change a user makes through the API is one audit entry with who,
 * what, on what and how it ended, stored and written as a log line; the log says what the tasks and
 * the MQTT connection did; and no secret used along the way reaches the log file.
 */

const WRONG_PASSWORD = 'not-the-password-7f3a';
const NEW_PASSWORD = 'a-new-admin-password-91c2';
const MQTT_PASSWORD = 'mqtt-broker-password-5d1e';
const CALLBACK_SECRET = 'callback-hmac-secret-8b4f6a';
const RECEIVER_PASSWORD = 'receiver-basic-password-2e9';
const RECEIVER_TOKEN = 'receiver-query-token-0c7d';

let t: TestEngine;
let broker: Mosquitto;
let logText = '';

beforeAll(async () => {
  broker = await Mosquitto.start();
  t = await startTestEngine(undefined, undefined, { logLevel: 'info', log: { stdout: false } });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await broker?.dispose();
});

type Shown = Omit<AuditEntry, 'id' | 'at'>;
const shown = ({ id: _id, at: _at, ...rest }: AuditEntry): Shown => rest;

function data<T>(answer: Answer): T {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.data as T;
}

const entry = (fields: Partial<Shown> & Pick<Shown, 'action' | 'route'>): Shown => ({
  username: 'admin',
  client: '127.0.0.1',
  target: null,
  outcome: 'ok',
  status: 200,
  code: 0,
  fields: [],
  detail: null,
  ...fields,
});

const login = (password: string) =>
  t.call('POST', '/api/auth/token', { token: null, json: { username: 'admin', password } });

describe('the audit trail', () => {
  const expected: Shown[] = [];
  const tokens: string[] = [];
  let taskId = '';

  it('records each change a user makes, with who, what, on what and how it ended', async () => {
    tokens.push(t.token);
    // A wrong password: an entry for the name it tried, never the password.
    expect((await login(WRONG_PASSWORD)).status).toBe(401);
    expected.push(
      entry({
        action: 'auth.login',
        route: 'POST /api/auth/token',
        outcome: 'failed',
        status: 401,
        code: ERRORS.BAD_CREDENTIALS.code,
        fields: ['password', 'username'],
      }),
    );
    const token = data<{ access_token: string }>(await login(ADMIN_PASSWORD)).access_token;
    tokens.push(token);
    expected.push(
      entry({ action: 'auth.login', route: 'POST /api/auth/token', fields: ['password', 'username'] }),
    );

    // A rule update of an application.
    data(await t.call('PUT', '/api/zapk/builtin/app/motion', { token, json: { rule: { interval: 2 } } }));
    expected.push(
      entry({
        action: 'app.update',
        route: 'PUT /api/zapk/:zapk_id/app/:app_id',
        target: 'builtin/motion',
        fields: ['rule'],
      }),
    );

    // The MQTT settings, with a broker password.
    const mqtt = {
      enabled: true,
      url: broker.url,
      client_id: 'vc-audit-test',
      username: 'engine',
      password: MQTT_PASSWORD,
    };
    data(await t.call('PUT', '/api/settings/mqtt', { token, json: mqtt }));
    expected.push(
      entry({
        action: 'settings.mqtt',
        route: 'PUT /api/settings/mqtt',
        fields: ['client_id', 'enabled', 'password', 'url', 'username'],
      }),
    );
    await eventually('the MQTT connection', async () => {
      const status = data<{ status: { connected: boolean } }>(
        await t.call('GET', '/api/settings/mqtt', { token }),
      );
      return status.status.connected;
    });

    // A video task started (its receiver's URL carries credentials), updated and closed.
    const started = await t.call('POST', '/api/task', {
      token,
      json: {
        zapk_id: 'builtin',
        app_ids: ['motion'],
        video_url: VIDEO,
        report_url: `http://hook:${RECEIVER_PASSWORD}@127.0.0.1:9/cb?token=${RECEIVER_TOKEN}`,
        report_secret: CALLBACK_SECRET,
      },
    });
    taskId = data<{ task_id: string }>(started).task_id;
    expected.push(
      entry({
        action: 'task.start',
        route: 'POST /api/task',
        target: taskId,
        fields: ['app_ids', 'report_secret', 'report_url', 'video_url', 'zapk_id'],
      }),
    );
    data(await t.call('PUT', `/api/task/${taskId}`, { token, json: { app_ids: ['motion'] } }));
    expected.push(
      entry({ action: 'task.update', route: 'PUT /api/task/:task_id', target: taskId, fields: ['app_ids'] }),
    );
    // A refused change is an entry too, with its code.
    const refused = await t.call('PUT', `/api/task/${taskId}`, { token, json: { app_ids: ['no-such-app'] } });
    expect([refused.status, refused.body.code]).toEqual([404, ERRORS.APP_NOT_FOUND.code]);
    expected.push(
      entry({
        action: 'task.update',
        route: 'PUT /api/task/:task_id',
        target: taskId,
        outcome: 'failed',
        status: 404,
        code: ERRORS.APP_NOT_FOUND.code,
        fields: ['app_ids'],
      }),
    );
    // Signing links to its pictures changes nothing: no entry.
    data(
      await t.call('POST', '/api/auth/link', { token, json: { paths: [`/api/task/${taskId}/snapshot`] } }),
    );
    data(await t.call('DELETE', `/api/task/${taskId}`, { token }));
    expected.push(entry({ action: 'task.close', route: 'DELETE /api/task/:task_id', target: taskId }));
    data(await t.call('DELETE', `/api/task/${taskId}?purge=true`, { token }));
    expected.push(entry({ action: 'task.purge', route: 'DELETE /api/task/:task_id', target: taskId }));

    // The admin password changed (every token of the admin revoked), a new login, a logout.
    data(
      await t.call('PUT', '/api/auth/password', {
        token,
        json: { current_password: ADMIN_PASSWORD, password: NEW_PASSWORD },
      }),
    );
    expected.push(
      entry({
        action: 'auth.password_change',
        route: 'PUT /api/auth/password',
        fields: ['current_password', 'password'],
      }),
    );
    const second = data<{ access_token: string }>(await login(NEW_PASSWORD)).access_token;
    tokens.push(second);
    expected.push(
      entry({ action: 'auth.login', route: 'POST /api/auth/token', fields: ['password', 'username'] }),
    );
    data(await t.call('POST', '/api/auth/logout', { token: second }));
    expected.push(entry({ action: 'auth.logout', route: 'POST /api/auth/logout' }));

    // Without a valid token nothing changes, and nothing is an entry: the log counts such requests.
    expect((await t.call('DELETE', `/api/task/${taskId}`, { token: null })).status).toBe(401);
    expect((await t.call('DELETE', `/api/task/${taskId}`, { token })).status).toBe(401);
    // Reads are not entries.
    t.advance(0);
    tokens.push(t.token);
    const page = data<AuditPage>(await t.call('GET', '/api/audit'));
    expect(page.items.map(shown)).toEqual([...expected].reverse());
    expect(page.next_before).toBeNull();
    const ids = page.items.map((item) => item.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  }, 90_000);

  it('pages newest first and filters; needs a token', async () => {
    const all = data<AuditPage>(await t.call('GET', '/api/audit')).items;
    const first = data<AuditPage>(await t.call('GET', '/api/audit?limit=4'));
    expect(first.items).toEqual(all.slice(0, 4));
    expect(first.next_before).toBe(all[3]?.id);
    const next = data<AuditPage>(await t.call('GET', `/api/audit?limit=4&before=${first.next_before}`));
    expect(next.items).toEqual(all.slice(4, 8));
    const logins = data<AuditPage>(await t.call('GET', '/api/audit?action=auth.login'));
    expect(logins.items.map((item) => item.outcome)).toEqual(['ok', 'ok', 'failed']);
    const onTask = data<AuditPage>(await t.call('GET', `/api/audit?target=${taskId}&outcome=failed`));
    expect(onTask.items.map(shown)).toEqual([expected[6]]);
    const refused = await t.call('GET', '/api/audit', { token: null });
    expect([refused.status, refused.body.code]).toEqual([401, ERRORS.MISSING_TOKEN.code]);
    const tooMany = await t.call('GET', '/api/audit?limit=501');
    expect([tooMany.status, tooMany.body.code]).toEqual([400, ERRORS.INVALID_PARAMETER.code]);
  });

  it('writes each entry, the tasks, callbacks and the MQTT connection to the log file, owner-only', async () => {
    const dir = join(t.dataDir, 'logs');
    const read = () => readFileSync(join(dir, 'engine.log'), 'utf8');
    // Each line is in the file when it is logged: the task's events could not reach its receiver.
    await eventually('a failed callback in the log', () => read().includes('"event":"delivery.failed"'));
    await broker.stop();
    await eventually('the MQTT connection lost in the log', () =>
      read().includes('"event":"mqtt.disconnected"'),
    );
    await t.engine.close();
    logText = read();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'engine.log')).mode & 0o777).toBe(0o600);
    const lines = logText
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const of = (event: string) => lines.filter((line) => line.event === event);
    const pick = (line: Record<string, unknown>, keys: readonly string[]) =>
      Object.fromEntries(keys.map((key) => [key, line[key]]));

    const keys = Object.keys(expected[0] as Shown);
    expect(of('audit').map((line) => pick(line, keys))).toEqual(expected);
    expect(of('audit').map((line) => line.level)).toEqual(
      expected.map((e) => (e.outcome === 'ok' ? 30 : 40)),
    );
    expect(
      of('task.started').map((line) =>
        pick(line, ['task_id', 'mode', 'zapk_id', 'app_ids', 'source', 'receiver']),
      ),
    ).toEqual([
      {
        task_id: taskId,
        mode: 'video',
        zapk_id: 'builtin',
        app_ids: ['motion'],
        source: VIDEO,
        receiver: 'http://127.0.0.1:9/cb',
      },
    ]);
    expect(of('task.updated').map((line) => line.task_id)).toEqual([taskId]);
    expect(of('task.closed').map((line) => pick(line, ['task_id', 'close_code', 'reason']))).toEqual([
      { task_id: taskId, close_code: 1, reason: 'closed by the caller' },
    ]);
    expect(of('mqtt.connected').map((line) => line.broker)).toEqual([broker.url]);
    expect(of('mqtt.disconnected').map((line) => line.broker)).toEqual([broker.url]);
    expect(of('delivery.failed')[0]).toMatchObject({
      task_id: taskId,
      attempts: 1,
      http_status: null,
      error: expect.stringContaining('ECONNREFUSED'),
    });
    // Two requests refused for their token: the first in full, the other counted.
    expect(of('auth.refused').map((line) => pick(line, ['client', 'route', 'code', 'repeats']))).toEqual([
      {
        client: '127.0.0.1',
        route: 'DELETE /api/task/:task_id',
        code: ERRORS.MISSING_TOKEN.code,
        repeats: undefined,
      },
      {
        client: '127.0.0.1',
        route: 'DELETE /api/task/:task_id',
        code: ERRORS.INVALID_TOKEN.code,
        repeats: 1,
      },
    ]);
  });

  it('keeps every secret used out of the log file', () => {
    const secrets = [
      ADMIN_PASSWORD,
      WRONG_PASSWORD,
      NEW_PASSWORD,
      MQTT_PASSWORD,
      CALLBACK_SECRET,
      RECEIVER_PASSWORD,
      RECEIVER_TOKEN,
      ...tokens,
    ];
    expect(tokens).toHaveLength(4);
    expect(logText.length).toBeGreaterThan(1000);
    expect(secrets.filter((secret) => logText.includes(secret))).toEqual([]);
  });
});

describe('the log of a busy engine', () => {
  it('stays within the files and bytes EngineOptions.log allows', async () => {
    const limits = { maxFileBytes: 4096, maxFiles: 2 };
    const busy = await startTestEngine(undefined, undefined, {
      logLevel: 'info',
      log: { ...limits, stdout: false },
    });
    try {
      // 200 changes, an audit line of about 400 bytes each: some 20 times what the log may hold.
      for (let n = 0; n < 200; n++) {
        const answer = await busy.call('PUT', '/api/alarms/review', {
          json: { event_ids: [`event-${n}`], reviewed: true },
        });
        expect(answer.status).toBe(200);
      }
      const dir = join(busy.dataDir, 'logs');
      const names = readdirSync(dir).sort();
      expect(names).toEqual(['engine.log', 'engine.log.1']);
      const sizes = names.map((name) => statSync(join(dir, name)).size);
      for (const size of sizes) expect(size).toBeLessThan(limits.maxFileBytes + 1024);
      const last = readFileSync(join(dir, 'engine.log'), 'utf8').trim().split('\n').at(-1) ?? '{}';
      expect(JSON.parse(last)).toMatchObject({ event: 'audit', action: 'alarm.review', outcome: 'ok' });
    } finally {
      await busy.stop();
    }
  }, 60_000);
});

describe('the bounds of the audit trail', () => {
  it('keeps the newest entries up to its count, and none older than its age', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-audit-'));
    const db = openDb(dir);
    const logging = createEngineLogger(dir, 'silent', { stdout: false });
    try {
      const clock = new ManualClock();
      const trail = new AuditTrail(new AuditRepository(db), clock, logging.logger, {
        maxEntries: 5,
        maxAgeMs: 3_600_000,
      });
      const record = (n: number) =>
        trail.record(
          entry({ action: 'task.close', route: 'DELETE /api/task/:task_id', target: `task-${n}` }),
        );
      for (let n = 1; n <= 12; n++) record(n);
      const targets = () => trail.list({}).items.map((item) => item.target);
      expect(targets()).toEqual(['task-12', 'task-11', 'task-10', 'task-9', 'task-8']);
      clock.advance(3_000_000);
      record(13);
      clock.advance(1_000_000);
      // Past the age the older five go with the next entry; task-13 is within it.
      record(14);
      expect(targets()).toEqual(['task-14', 'task-13']);
    } finally {
      db.close();
      logging.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
