// Over 400 lines on purpose: the whole REST contract, endpoint by endpoint, against one engine.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../engine/contract/errors';
import { buildZapk } from '../engine/packages/zapk';
import type { TaskView } from '../engine/tasks/schema';
import { ADMIN_PASSWORD, type Answer, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';

/**
 * The REST contract (service-interface.md + api-decisions.md) driven over real HTTP against a real
 * engine: success shapes field by field, and the failure answers every endpoint owes.
 */

const PERSON_ZONE = [
  [0, 0],
  [10, 0],
  [10, 10],
];
const VEHICLE_ZONE = [
  [1, 1],
  [50, 1],
  [50, 50],
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const EXAMPLE_MANIFEST = resolve(import.meta.dirname, '../examples/coco-yolox-nano/manifest.json');
const work = mkdtempSync(join(tmpdir(), 'vc-contract-'));
let t: TestEngine;
let examplePath: string;

function expectError(answer: Answer, kind: keyof typeof ERRORS, msgPart?: string | RegExp) {
  expect({ status: answer.status, code: answer.body.code }).toEqual({
    status: ERRORS[kind].status,
    code: ERRORS[kind].code,
  });
  expect(typeof answer.body.msg).toBe('string');
  expect(answer.body.msg.length).toBeGreaterThan(5);
  expect(answer.body).not.toHaveProperty('data');
  if (msgPart) expect(answer.body.msg).toMatch(msgPart);
}

function expectOk(answer: Answer): unknown {
  expect(answer.body.msg, JSON.stringify(answer.body)).toBe('success');
  expect(answer.status).toBe(200);
  expect(answer.body.code).toBe(0);
  return answer.body.data;
}

const form = (name: string, bytes: Uint8Array<ArrayBuffer>, filename = 'file.bin') => {
  const body = new FormData();
  body.append(name, new Blob([bytes]), filename);
  return body;
};

async function upload(path: string, bytes: Uint8Array<ArrayBuffer>, name = 'file') {
  return t.call('POST', path, { raw: { type: '', body: form(name, bytes, 'package.zapk') } });
}

async function installExample() {
  return upload('/api/zapk', readFileSync(examplePath));
}

async function startImageTask(extra: Record<string, unknown> = {}) {
  const data = expectOk(
    await t.call('POST', '/api/task', {
      json: { mode: 'image', zapk_id: 'coco-yolox-nano', app_ids: ['person'], ...extra },
    }),
  );
  return (data as { task_id: string }).task_id;
}

async function startVideoTask() {
  const data = expectOk(
    await t.call('POST', '/api/task', {
      json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: VIDEO },
    }),
  );
  return (data as { task_id: string }).task_id;
}

beforeAll(async () => {
  examplePath = join(work, 'example.zapk');
  await buildZapk(EXAMPLE_MANIFEST, examplePath);
  t = await startTestEngine();
  expectOk(await installExample());
});
afterAll(async () => t?.stop());

describe('4.1 authorization', () => {
  it('issues an opaque 256-bit bearer token for the admin, valid 24 h', async () => {
    const answer = await t.call('POST', '/api/auth/token', {
      token: null,
      json: { username: 'admin', password: 'test-admin-password' },
    });
    const data = expectOk(answer) as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(data.token_type).toBe('Bearer');
    expect(data.expires_in).toBe(86_400);
    expect(data.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expectOk(await t.call('GET', '/api/tasks', { token: data.access_token as string }));
  });

  it('refuses wrong credentials and bad bodies', async () => {
    expectError(
      await t.call('POST', '/api/auth/token', { token: null, json: { username: 'admin', password: 'nope' } }),
      'BAD_CREDENTIALS',
    );
    expectError(
      await t.call('POST', '/api/auth/token', { token: null, json: { username: 'ghost', password: 'x' } }),
      'BAD_CREDENTIALS',
    );
    expectError(
      await t.call('POST', '/api/auth/token', { token: null, json: { username: 'admin' } }),
      'INVALID_PARAMETER',
      'body.password: is required',
    );
    expectError(
      await t.call('POST', '/api/auth/token', { token: null, json: { username: 1, password: 'x' } }),
      'INVALID_PARAMETER',
      'body.username',
    );
    expectError(
      await t.call('POST', '/api/auth/token', {
        token: null,
        raw: { type: 'application/json', body: '{"username":' },
      }),
      'MALFORMED_JSON',
    );
  });

  it('expires tokens after 24 h', async () => {
    const { access_token } = t.engine.issueToken();
    expectOk(await t.call('GET', '/api/zapk', { token: access_token }));
    t.advance(24 * 3600_000 + 1);
    expectError(await t.call('GET', '/api/zapk', { token: access_token }), 'INVALID_TOKEN', /expired/);
  });

  it('health is open and says nothing sensitive', async () => {
    const data = expectOk(await t.call('GET', '/api/health', { token: null })) as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual(['status', 'uptime_s', 'version']);
    expect(data.status).toBe('ok');
  });

  it('a password change revokes the old tokens', async () => {
    const other = await startTestEngine();
    try {
      const old = other.token;
      expectOk(
        await other.call('PUT', '/api/auth/password', {
          json: { current_password: ADMIN_PASSWORD, password: 'a-new-password' },
        }),
      );
      expectError(await other.call('GET', '/api/zapk', { token: old }), 'INVALID_TOKEN');
      expectError(
        await other.call('PUT', '/api/auth/password', {
          token: other.engine.issueToken().access_token,
          json: { current_password: 'a-new-password', password: 'short' },
        }),
        'INVALID_PARAMETER',
        'body.password',
      );
      const answer = await other.call('POST', '/api/auth/token', {
        token: null,
        json: { username: 'admin', password: 'a-new-password' },
      });
      expectOk(answer);
    } finally {
      await other.stop();
    }
  });
});

/** One valid request per protected endpoint; each must refuse a request without a good token. */
const PROTECTED: ReadonlyArray<[string, string, unknown?]> = [
  ['GET', '/api/zapk'],
  ['POST', '/api/zapk'],
  ['DELETE', '/api/zapk/coco-yolox-nano'],
  ['PUT', '/api/zapk/coco-yolox-nano/app/person', { name: 'x' }],
  ['POST', '/api/task', { zapk_id: 'coco-yolox-nano', app_ids: ['person'], mode: 'image' }],
  ['GET', '/api/tasks'],
  ['GET', '/api/task/00000000-0000-4000-8000-000000000000'],
  ['PUT', '/api/task/00000000-0000-4000-8000-000000000000', { app_ids: ['person'] }],
  ['DELETE', '/api/task/00000000-0000-4000-8000-000000000000'],
  ['POST', '/api/task/00000000-0000-4000-8000-000000000000/image', { image: 'AAAA' }],
  ['POST', '/api/task/00000000-0000-4000-8000-000000000000/diff_image', { image_b: 'AAAA' }],
  ['POST', '/api/task/00000000-0000-4000-8000-000000000000/ailive', { app_ids: ['person'] }],
  ['DELETE', '/api/task/00000000-0000-4000-8000-000000000000/livestream/s1'],
  ['POST', '/api/stream', { video_url: 'rtsp://127.0.0.1/x' }],
  ['DELETE', '/api/stream/s1'],
  [
    'POST',
    '/api/task/00000000-0000-4000-8000-000000000000/optimization',
    { app_ids: ['person'], duration: 60 },
  ],
  ['GET', '/api/task/00000000-0000-4000-8000-000000000000/optimization/o1'],
  ['GET', '/api/task/00000000-0000-4000-8000-000000000000/optimization/o1/export'],
  ['PUT', '/api/auth/password', { current_password: ADMIN_PASSWORD, password: 'whatever-long' }],
  ['GET', '/api/openapi.json'],
  ['GET', '/api/task/00000000-0000-4000-8000-000000000000/events'],
  ['GET', '/api/task/00000000-0000-4000-8000-000000000000/counts'],
  ['POST', '/api/events/00000000-0000-4000-8000-000000000000/redeliver'],
  ['GET', '/api/events/backlog'],
  ['GET', '/api/events/stream'],
  ['GET', '/api/settings/mqtt'],
  ['PUT', '/api/settings/mqtt', { enabled: false }],
  ['POST', '/api/settings/mqtt/test', { url: 'mqtt://127.0.0.1:1' }],
  ['GET', '/api/settings/callbacks'],
  ['PUT', '/api/settings/callbacks', { default_report_url: '' }],
  ['GET', '/api/audit'],
];

describe('every protected endpoint refuses a missing, malformed, unknown or expired token', () => {
  it.each(PROTECTED)('%s %s', async (method, path, json) => {
    const before = await t.call('GET', '/api/tasks');
    const tasksBefore = (before.body.data as unknown[]).length;
    const noToken = await t.call(method, path, { token: null, json });
    expectError(noToken, 'MISSING_TOKEN');
    expect(noToken.headers.get('www-authenticate')).toBe('Bearer');
    expectError(
      await t.call(method, path, { token: null, json, headers: { authorization: 'Basic YWRtaW46eA==' } }),
      'MISSING_TOKEN',
    );
    expectError(await t.call(method, path, { token: 'short', json }), 'INVALID_TOKEN');
    expectError(await t.call(method, path, { token: 'A'.repeat(43), json }), 'INVALID_TOKEN');
    // Nothing was changed by any refused request.
    expect(((await t.call('GET', '/api/tasks')).body.data as unknown[]).length).toBe(tasksBefore);
  });
});

describe('envelope on every failure', () => {
  it('unknown endpoints answer 404, known ones with the wrong method 405 with Allow', async () => {
    expectError(await t.call('GET', '/api/nothing-here'), 'ROUTE_NOT_FOUND');
    const wrongMethod = await t.call('PATCH', '/api/task/abc');
    expectError(wrongMethod, 'METHOD_NOT_ALLOWED');
    expect(wrongMethod.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PUT']);
    expectError(await t.call('GET', '/api/task'), 'METHOD_NOT_ALLOWED');
  });

  it('malformed JSON, empty JSON, wrong content type and oversized bodies on every JSON endpoint', async () => {
    const jsonEndpoints = PROTECTED.filter(
      ([method, path]) => ['POST', 'PUT'].includes(method) && !path.endsWith('/api/zapk'),
    );
    for (const [method, path] of jsonEndpoints) {
      expectError(
        await t.call(method, path, { raw: { type: 'application/json', body: '{"a": [1,' } }),
        'MALFORMED_JSON',
      );
      expectError(
        await t.call(method, path, { raw: { type: 'application/json', body: '' } }),
        'MALFORMED_JSON',
      );
      expectError(
        await t.call(method, path, { raw: { type: 'text/plain', body: 'hello' } }),
        'UNSUPPORTED_MEDIA_TYPE',
      );
      // Image endpoints take base64 images of up to 20 MiB in JSON; the others 1 MiB.
      const size = path.includes('image') ? 60 * 1024 * 1024 : 2 * 1024 * 1024;
      const huge = JSON.stringify({ padding: 'x'.repeat(size) });
      expectError(
        await t.call(method, path, { raw: { type: 'application/json', body: huge } }),
        'BODY_TOO_LARGE',
      );
    }
  });

  it('the OpenAPI document lists every endpoint of the contract', async () => {
    const doc = expectOkRaw(await t.call('GET', '/api/openapi.json')) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.openapi).toBe('3.0.3');
    const expected: Record<string, string[]> = {
      '/api/auth/token': ['post'],
      '/api/health': ['get'],
      '/api/zapk': ['get', 'post'],
      '/api/zapk/{zapk_id}': ['delete'],
      '/api/zapk/{zapk_id}/app/{app_id}': ['put'],
      '/api/task': ['post'],
      '/api/tasks': ['get'],
      '/api/task/{task_id}': ['delete', 'get', 'put'],
      '/api/task/{task_id}/image': ['post'],
      '/api/task/{task_id}/diff_image': ['post'],
      '/api/task/{task_id}/ailive': ['post'],
      '/api/task/{task_id}/livestream/{stream}': ['delete'],
      '/api/stream': ['post'],
      '/api/stream/{stream_id}': ['delete'],
      '/api/task/{task_id}/optimization': ['post'],
      '/api/task/{task_id}/optimization/{optimization_id}': ['get'],
      '/api/task/{task_id}/optimization/{optimization_id}/export': ['get'],
      '/api/task/{task_id}/events': ['get'],
      '/api/events/{event_id}/redeliver': ['post'],
      '/api/events/backlog': ['get'],
      '/api/events/stream': ['get'],
      '/api/settings/mqtt': ['get', 'put'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(Object.keys(doc.paths[path] ?? {}).sort(), path).toEqual(methods);
    }
  });
});

/** openapi.json is the one answer that is not enveloped: it is the OpenAPI document itself. */
function expectOkRaw(answer: Answer): unknown {
  expect(answer.status).toBe(200);
  return answer.body;
}

describe('4.2 / 4.3 application packages', () => {
  it('lists packages in the exact shape of 2.2-2.6', async () => {
    const data = expectOk(await t.call('GET', '/api/zapk')) as Array<Record<string, unknown>>;
    expect(data.map((p) => p.zapk_id)).toEqual(['builtin', 'coco-yolox-nano']);
    const pkg = data[1] as { zapk_id: string; name: string; apps: Record<string, Record<string, unknown>> };
    expect(Object.keys(pkg).sort()).toEqual(['apps', 'builtin', 'name', 'version', 'zapk_id']);
    expect(Object.keys(pkg.apps).sort()).toEqual(['crowd', 'loiter', 'person', 'vehicle']);
    const person = pkg.apps.person as Record<string, unknown> & { rule: Record<string, unknown> };
    expect(person).toMatchObject({ app_id: 'person', type: 1, perpetual: true, license_expire: 0 });
    expect(typeof person.name).toBe('string');
    const classes = person.rule.classes as Record<string, Record<string, unknown>>;
    expect(Object.keys(classes)).toEqual(['0']);
    expect(Object.keys(classes['0'] ?? {}).sort()).toEqual([
      'class_id',
      'color',
      'max_pixel',
      'min_pixel',
      'name',
      'threshold',
    ]);
    expect(classes['0']).toMatchObject({ class_id: '0', name: 'person' });
    expect(typeof person.rule.interval).toBe('number');
    const vehicle = pkg.apps.vehicle?.rule as { classes: object };
    expect(Object.keys(vehicle.classes).sort()).toEqual(['2', '3', '5', '7']);
    const crowd = pkg.apps.crowd?.rule as { counter: Record<string, unknown> };
    expect(Object.keys(crowd.counter).sort()).toEqual([
      'class_counts',
      'distance',
      'max_count',
      'min_count',
      'numeric_type',
    ]);
    expect(pkg.apps.loiter?.type).toBe(3);
  });

  it('updates an app rule, validates it fully, and shows it in the next listing', async () => {
    const rule = {
      interval: 2.5,
      class_area: { color: '#00ff00' },
      classes: [
        { class_id: '0', name: 'walker', color: '#112233', threshold: 0.61, min_pixel: 10, max_pixel: 400 },
      ],
      counter: {
        numeric_type: 1,
        distance: 0,
        min_count: 1,
        max_count: 9,
        class_counts: [{ class_id: '0', min_count: 1, max_count: 0 }],
      },
    };
    const data = expectOk(
      await t.call('PUT', '/api/zapk/coco-yolox-nano/app/person', { json: { name: 'Walkers', rule } }),
    );
    expect(data).toEqual({ zapk_id: 'coco-yolox-nano', app_id: 'person' });
    const listing = expectOk(await t.call('GET', '/api/zapk')) as Array<{
      zapk_id: string;
      apps: Record<string, { name: string; rule: unknown }>;
    }>;
    const person = listing.find((p) => p.zapk_id === 'coco-yolox-nano')?.apps.person;
    expect(person?.name).toBe('Walkers');
    expect(person?.rule).toEqual({ ...rule, classes: { '0': rule.classes[0] } });
  });

  it.each([
    [
      {
        rule: {
          classes: [
            { class_id: '0', name: 'p', color: '#112233', threshold: 1.5, min_pixel: 0, max_pixel: 0 },
          ],
        },
      },
      'rule.classes[0].threshold',
    ],
    [
      {
        rule: {
          classes: [
            { class_id: '99', name: 'p', color: '#112233', threshold: 0.5, min_pixel: 0, max_pixel: 0 },
          ],
        },
      },
      'no class "99"',
    ],
    [
      {
        rule: {
          classes: [
            { class_id: '0', name: 'p', color: '#112233', threshold: 0.5, min_pixel: 50, max_pixel: 10 },
          ],
        },
      },
      'min_pixel 50 is greater',
    ],
    [
      {
        rule: {
          classes: [{ class_id: '0', name: 'p', color: 'red', threshold: 0.5, min_pixel: 0, max_pixel: 0 }],
        },
      },
      'rule.classes[0].color',
    ],
    [{ rule: { classes: { '0': {} } } }, 'rule.classes: must be array'],
    [
      { rule: { counter: { numeric_type: 2, distance: 0, min_count: 0, max_count: 0, class_counts: [] } } },
      'rule.counter.numeric_type',
    ],
    [
      { rule: { counter: { numeric_type: 0, distance: 0, min_count: 5, max_count: 2, class_counts: [] } } },
      'min_count 5 is greater',
    ],
    [{ rule: { interval: -1 } }, 'rule.interval'],
    [{ rule: { interval: '5' } }, 'rule.interval: must be number'],
    [
      { rule: { length_reference: { pixels: 1, meters: 1 } } },
      'rule.length_reference: is not an allowed field',
    ],
    [{ name: '' }, 'body.name'],
    [{}, 'body'],
  ])('refuses %j and changes nothing', async (body, msgPart) => {
    const before = expectOk(await t.call('GET', '/api/zapk'));
    expectError(
      await t.call('PUT', '/api/zapk/coco-yolox-nano/app/person', { json: body }),
      'INVALID_PARAMETER',
      msgPart,
    );
    expect(expectOk(await t.call('GET', '/api/zapk'))).toEqual(before);
  });

  it('unknown package or app ids answer 404', async () => {
    expectError(
      await t.call('PUT', '/api/zapk/nope/app/person', { json: { name: 'x' } }),
      'PACKAGE_NOT_FOUND',
    );
    expectError(
      await t.call('PUT', '/api/zapk/coco-yolox-nano/app/nope', { json: { name: 'x' } }),
      'APP_NOT_FOUND',
    );
    expectError(await t.call('DELETE', '/api/zapk/nope'), 'PACKAGE_NOT_FOUND');
  });

  it('refuses an upload that is not a package, or not multipart', async () => {
    const before = expectOk(await t.call('GET', '/api/zapk'));
    expectError(await upload('/api/zapk', new TextEncoder().encode('not a zip at all')), 'INVALID_PACKAGE');
    expectError(
      await upload('/api/zapk', new Uint8Array([1, 2, 3]), 'other'),
      'INVALID_PARAMETER',
      'body.file',
    );
    expectError(await t.call('POST', '/api/zapk', { json: { file: 'x' } }), 'UNSUPPORTED_MEDIA_TYPE');
    expect(expectOk(await t.call('GET', '/api/zapk'))).toEqual(before);
  });

  it('refuses to uninstall a package while a task uses it, then uninstalls and reinstalls it', async () => {
    const taskId = await startImageTask();
    expectError(await t.call('DELETE', '/api/zapk/coco-yolox-nano'), 'PACKAGE_IN_USE');
    expectError(await installExample(), 'PACKAGE_IN_USE');
    expectOk(await t.call('DELETE', `/api/task/${taskId}`));
    expect(expectOk(await t.call('DELETE', '/api/zapk/coco-yolox-nano'))).toEqual({
      zapk_id: 'coco-yolox-nano',
    });
    const ids = (expectOk(await t.call('GET', '/api/zapk')) as Array<{ zapk_id: string }>).map(
      (p) => p.zapk_id,
    );
    expect(ids).toEqual(['builtin']);
    expect(expectOk(await installExample())).toEqual({
      zapk_id: 'coco-yolox-nano',
      version: '1.0.0',
      upgraded: false,
      change: 'installed',
    });
    expect(expectOk(await installExample())).toMatchObject({
      zapk_id: 'coco-yolox-nano',
      upgraded: true,
      change: 'reinstalled',
    });
  });
});

describe('4.4 - 4.7 tasks', () => {
  it('starts a video task once the source gives a frame, and lists it in the shape of 2.7', async () => {
    const body = {
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person', 'loiter'],
      device_id: 'cam-7',
      business_id: 'biz-1',
      video_url: VIDEO,
      report_url: 'http://127.0.0.1:9/callback',
      osd: { display_box: false, font_size: 20 },
      app_configs: [
        {
          app_id: 'person',
          polygon: [
            [0, 0],
            [384, 0],
            [384, 576],
            [0, 576],
          ],
        },
        {
          app_id: 'loiter',
          polygon: [
            [10, 300],
            [700, 300],
          ],
        },
      ],
    };
    const { task_id } = expectOk(await t.call('POST', '/api/task', { json: body })) as { task_id: string };
    expect(task_id).toMatch(UUID);
    // The listing leaves app_configs out unless asked (with_areas); the task's own answer has them.
    const plain = expectOk(await t.call('GET', '/api/tasks')) as Array<Record<string, unknown>>;
    expect(plain.find((x) => x.task_id === task_id)).not.toHaveProperty('app_configs');
    const list = expectOk(await t.call('GET', '/api/tasks?with_areas=true')) as Array<
      Record<string, unknown>
    >;
    const task = list.find((x) => x.task_id === task_id) as Record<string, unknown>;
    expect(Object.keys(task).sort()).toEqual(
      [
        'analysis_fps',
        'analysis_url',
        'app_configs',
        'app_ids',
        'business_id',
        'close_code',
        'closed_at',
        'created_at',
        'device_id',
        'dump',
        'health',
        'mode',
        'name',
        'osd',
        'persistent',
        'motion_gate',
        'gate_regions',
        'priority',
        'gpu',
        'report_url',
        'rule_overrides',
        'status',
        'task_id',
        'video_url',
        'zapk_id',
      ].sort(),
    );
    expect(task).toMatchObject({
      mode: 'video',
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person', 'loiter'],
      device_id: 'cam-7',
      business_id: 'biz-1',
      video_url: VIDEO,
      analysis_url: null,
      report_url: body.report_url,
      close_code: 0,
      status: 'running',
      app_configs: body.app_configs,
      osd: {
        display_name: true,
        display_box: false,
        display_track: true,
        display_polygon: true,
        font_size: 20,
        border_size: 2,
      },
    });
    expect((task as unknown as TaskView).health.stream).toMatchObject({
      state: 'running',
      width: 768,
      height: 576,
    });
    // The same task on its own, but for its health (and dump), which are live figures.
    const { health: _health, dump: _dump, ...stored } = task;
    expect(expectOk(await t.call('GET', `/api/task/${task_id}`))).toMatchObject(stored);
  });

  it('answers 503 for a source that gives no frame, and leaves no task behind', async () => {
    const before = (expectOk(await t.call('GET', '/api/tasks')) as unknown[]).length;
    const answer = await t.call('POST', '/api/task', {
      json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: join(work, 'missing.avi') },
    });
    expectError(answer, 'STREAM_UNAVAILABLE', /could not be opened/);
    expectError(
      await t.call('POST', '/api/task', {
        json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: 'rtsp://127.0.0.1:9/none' },
      }),
      'STREAM_UNAVAILABLE',
    );
    expect((expectOk(await t.call('GET', '/api/tasks')) as unknown[]).length).toBe(before);
  });

  const base = { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: VIDEO };
  it.each<[string, Record<string, unknown>, keyof typeof ERRORS, string | RegExp]>([
    [
      'missing zapk_id',
      { app_ids: ['person'], video_url: VIDEO },
      'INVALID_PARAMETER',
      'body.zapk_id: is required',
    ],
    [
      'missing app_ids',
      { zapk_id: 'coco-yolox-nano', video_url: VIDEO },
      'INVALID_PARAMETER',
      'body.app_ids: is required',
    ],
    ['empty app_ids', { ...base, app_ids: [] }, 'INVALID_PARAMETER', 'body.app_ids'],
    [
      'app_ids not an array',
      { ...base, app_ids: 'person' },
      'INVALID_PARAMETER',
      'body.app_ids: must be array',
    ],
    ['unknown mode', { ...base, mode: 'audio' }, 'INVALID_PARAMETER', 'body.mode'],
    ['unknown field', { ...base, input: 'x' }, 'INVALID_PARAMETER', 'body.input: is not an allowed field'],
    [
      'video without video_url',
      { zapk_id: 'coco-yolox-nano', app_ids: ['person'] },
      'INVALID_PARAMETER',
      'body.video_url: is required',
    ],
    [
      'video_url with a pseudo-protocol',
      { ...base, video_url: 'concat:/etc/passwd|/etc/hosts' },
      'INVALID_PARAMETER',
      'scheme "concat"',
    ],
    ['relative path', { ...base, video_url: 'vtest.avi' }, 'INVALID_PARAMETER', 'body.video_url'],
    ['report_url not http', { ...base, report_url: 'ftp://x/y' }, 'INVALID_PARAMETER', 'body.report_url'],
    [
      'osd with a wrong type',
      { ...base, osd: { font_size: 'big' } },
      'INVALID_PARAMETER',
      'body.osd.font_size',
    ],
    ['unknown package', { ...base, zapk_id: 'nope' }, 'PACKAGE_NOT_FOUND', '"nope"'],
    ['unknown app', { ...base, app_ids: ['person', 'ghost'] }, 'APP_NOT_FOUND', '"ghost"'],
    [
      'polygon of an app not in the task',
      {
        ...base,
        app_configs: [
          {
            app_id: 'vehicle',
            polygon: [
              [0, 0],
              [9, 0],
              [9, 9],
            ],
          },
        ],
      },
      'INVALID_PARAMETER',
      'not one of the task',
    ],
    [
      'self-crossing polygon',
      {
        ...base,
        app_configs: [
          {
            app_id: 'person',
            polygon: [
              [0, 0],
              [100, 100],
              [100, 0],
              [0, 100],
            ],
          },
        ],
      },
      'INVALID_PARAMETER',
      'crosses itself',
    ],
    [
      'flat polygon',
      {
        ...base,
        app_configs: [
          {
            app_id: 'person',
            polygon: [
              [0, 0],
              [50, 50],
              [100, 100],
            ],
          },
        ],
      },
      'INVALID_PARAMETER',
      'no area',
    ],
    [
      'line for a detection app',
      {
        ...base,
        app_configs: [
          {
            app_id: 'person',
            polygon: [
              [0, 0],
              [100, 100],
            ],
          },
        ],
      },
      'INVALID_PARAMETER',
      'time-series',
    ],
    [
      'one-point polygon',
      { ...base, app_configs: [{ app_id: 'person', polygon: [[5, 5]] }] },
      'INVALID_PARAMETER',
      'at least 3 points',
    ],
    [
      'point with three numbers',
      {
        ...base,
        app_configs: [
          {
            app_id: 'person',
            polygon: [
              [0, 0, 1],
              [9, 0],
              [9, 9],
            ],
          },
        ],
      },
      'INVALID_PARAMETER',
      'polygon[0]',
    ],
    [
      'negative coordinate',
      {
        ...base,
        app_configs: [
          {
            app_id: 'person',
            polygon: [
              [-1, 0],
              [9, 0],
              [9, 9],
            ],
          },
        ],
      },
      'INVALID_PARAMETER',
      'polygon[0][0]',
    ],
    [
      'diff task with a detection app',
      { zapk_id: 'coco-yolox-nano', app_ids: ['person'], mode: 'diff' },
      'NOT_CHANGE_DETECTION_APP',
      '"person"',
    ],
    [
      'image task with a time-series app',
      { zapk_id: 'coco-yolox-nano', app_ids: ['loiter'], mode: 'image' },
      'TIME_SERIES_NOT_VIDEO',
      '"loiter"',
    ],
    [
      'video task with a change-detection app',
      { zapk_id: 'builtin', app_ids: ['change'], video_url: VIDEO },
      'CHANGE_DETECTION_NOT_DIFF',
      '"change"',
    ],
    [
      'image task with a video_url',
      { zapk_id: 'coco-yolox-nano', app_ids: ['person'], mode: 'image', video_url: VIDEO },
      'INVALID_PARAMETER',
      'only for video tasks',
    ],
  ])('refuses %s and creates nothing', async (_name, body, kind, msgPart) => {
    const before = (expectOk(await t.call('GET', '/api/tasks')) as unknown[]).length;
    expectError(await t.call('POST', '/api/task', { json: body }), kind, msgPart);
    expect((expectOk(await t.call('GET', '/api/tasks')) as unknown[]).length).toBe(before);
  });

  it('refuses an app whose license has expired (403)', async () => {
    const dir = mkdtempSync(join(work, 'expired-'));
    const manifest = {
      format: 1,
      zapk_id: 'trial',
      name: 'Trial package',
      version: '0.1.0',
      models: {
        m: {
          family: 'motion',
          labels: ['motion'],
          score_threshold: 0.3,
          nms_iou: 0.5,
          class_agnostic_nms: true,
        },
      },
      apps: [
        {
          app_id: 'old',
          name: 'Expired',
          type: 1,
          model: 'm',
          rule: { interval: 0 },
          license_expire: 1_000_000_000,
          perpetual: false,
        },
        {
          app_id: 'soon',
          name: 'Expires in a minute',
          type: 1,
          model: 'm',
          rule: { interval: 0 },
          license_expire: Math.floor(t.clock.now() / 1000) + 60,
          perpetual: false,
        },
        {
          app_id: 'forever',
          name: 'Perpetual',
          type: 1,
          model: 'm',
          rule: { interval: 0 },
          license_expire: 0,
          perpetual: true,
        },
      ],
    };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    await buildZapk(join(dir, 'manifest.json'), join(dir, 'trial.zapk'));
    expectOk(await upload('/api/zapk', readFileSync(join(dir, 'trial.zapk'))));
    expectError(
      await t.call('POST', '/api/task', { json: { mode: 'image', zapk_id: 'trial', app_ids: ['old'] } }),
      'LICENSE_EXPIRED',
      /"old" expired on 2001-09-09/,
    );
    // A license that runs out while the task runs closes it with close_code 4, also when the app
    // came with an update; an update that drops the app lets the task run on.
    const start = async (appIds: string[]) =>
      (
        expectOk(
          await t.call('POST', '/api/task', { json: { mode: 'image', zapk_id: 'trial', app_ids: appIds } }),
        ) as { task_id: string }
      ).task_id;
    const expiring = await start(['soon']);
    const gainsIt = await start(['forever']);
    const dropsIt = await start(['soon', 'forever']);
    expectOk(await t.call('PUT', `/api/task/${gainsIt}`, { json: { app_ids: ['forever', 'soon'] } }));
    expectOk(await t.call('PUT', `/api/task/${dropsIt}`, { json: { app_ids: ['forever'] } }));
    t.advance(61_000);
    for (const taskId of [expiring, gainsIt]) {
      expect(expectOk(await t.call('GET', `/api/task/${taskId}`))).toMatchObject({
        status: 'closed',
        close_code: 4,
      });
    }
    expect(expectOk(await t.call('GET', `/api/task/${dropsIt}`))).toMatchObject({
      status: 'running',
      close_code: 0,
    });
  });

  it('updates app_ids, osd and polygons live, and validates the update', async () => {
    const taskId = await startImageTask({
      app_configs: [
        {
          app_id: 'person',
          polygon: PERSON_ZONE,
        },
      ],
    });
    const updated = expectOk(
      await t.call('PUT', `/api/task/${taskId}`, {
        json: {
          app_ids: ['person', 'vehicle'],
          osd: { display_track: false, border_size: 4 },
          app_configs: [
            {
              app_id: 'vehicle',
              polygon: VEHICLE_ZONE,
            },
          ],
        },
      }),
    ) as Record<string, unknown>;
    expect(updated).toMatchObject({
      app_ids: ['person', 'vehicle'],
      osd: { display_track: false, border_size: 4, display_box: true, font_size: 16 },
      app_configs: [
        {
          app_id: 'person',
          polygon: PERSON_ZONE,
        },
        {
          app_id: 'vehicle',
          polygon: VEHICLE_ZONE,
        },
      ],
    });
    // Dropping an app drops its polygon; an empty polygon means the whole frame.
    const dropped = expectOk(
      await t.call('PUT', `/api/task/${taskId}`, {
        json: { app_ids: ['vehicle'], app_configs: [{ app_id: 'vehicle', polygon: [] }] },
      }),
    );
    expect(dropped).toMatchObject({
      app_ids: ['vehicle'],
      app_configs: [{ app_id: 'vehicle', polygon: [] }],
    });

    expectError(await t.call('PUT', `/api/task/${taskId}`, { json: {} }), 'INVALID_PARAMETER', 'body');
    expectError(
      await t.call('PUT', `/api/task/${taskId}`, { json: { osd: { display_polygon: false } } }),
      'INVALID_PARAMETER',
      'display_polygon',
    );
    expectError(
      await t.call('PUT', `/api/task/${taskId}`, { json: { app_ids: ['loiter'] } }),
      'TIME_SERIES_NOT_VIDEO',
    );
    expectError(
      await t.call('PUT', `/api/task/${taskId}`, { json: { app_ids: ['ghost'] } }),
      'APP_NOT_FOUND',
    );
    expectError(
      await t.call('PUT', '/api/task/00000000-0000-4000-8000-000000000000', {
        json: { app_ids: ['person'] },
      }),
      'TASK_NOT_FOUND',
    );
    expect(expectOk(await t.call('GET', `/api/task/${taskId}`))).toMatchObject({ app_ids: ['vehicle'] });
  });

  it('closes a task with close_code 1, idempotently, and refuses to change it afterwards', async () => {
    const taskId = await startImageTask();
    expect(expectOk(await t.call('DELETE', `/api/task/${taskId}`))).toEqual({
      task_id: taskId,
      close_code: 1,
    });
    expect(expectOk(await t.call('DELETE', `/api/task/${taskId}`))).toEqual({
      task_id: taskId,
      close_code: 1,
    });
    expect(expectOk(await t.call('GET', `/api/task/${taskId}`))).toMatchObject({
      status: 'closed',
      close_code: 1,
      dump: 'closed by the caller',
    });
    expectError(await t.call('PUT', `/api/task/${taskId}`, { json: { app_ids: ['person'] } }), 'TASK_CLOSED');
    expectError(await t.call('DELETE', '/api/task/not-a-task'), 'TASK_NOT_FOUND');
  });

  it('closes a task whose DELETE carries a JSON content type and no body, as many clients send it', async () => {
    const taskId = await startImageTask();
    const noBody = { raw: { type: 'application/json', body: '' } };
    expect(expectOk(await t.call('DELETE', `/api/task/${taskId}`, noBody))).toEqual({
      task_id: taskId,
      close_code: 1,
    });
    expect(expectOk(await t.call('GET', `/api/task/${taskId}`))).toMatchObject({ status: 'closed' });
    expectError(await t.call('DELETE', '/api/zapk/nope', noBody), 'PACKAGE_NOT_FOUND');
    // A body that is there is still read as JSON.
    expectError(
      await t.call('DELETE', `/api/task/${taskId}`, { raw: { type: 'application/json', body: '{"a": [1,' } }),
      'MALFORMED_JSON',
    );
  });

  it('closes an image task after 5 min without images (close_code 3) and forgets it 24 h later', async () => {
    const taskId = await startImageTask();
    t.advance(5 * 60_000 - 1);
    expect(expectOk(await t.call('GET', `/api/task/${taskId}`))).toMatchObject({
      status: 'running',
      close_code: 0,
    });
    t.advance(1);
    expect(expectOk(await t.call('GET', `/api/task/${taskId}`))).toMatchObject({
      status: 'closed',
      close_code: 3,
    });
    t.advance(24 * 3600_000 + 3600_000);
    expectError(await t.call('GET', `/api/task/${taskId}`), 'TASK_NOT_FOUND');
  });
});

describe('upload checks, and endpoints whose analysis comes later: validated, then 501', () => {
  it('image upload', async () => {
    const taskId = await startImageTask();
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    expectError(
      await t.call('POST', `/api/task/${taskId}/image?image_id=3&enhance=1`, {
        raw: { type: 'image/png', body: png },
      }),
      'UNSUPPORTED_IMAGE_TYPE',
      'body.image: is not a JPEG, PNG, BMP or WebP image',
    );
    expectError(
      await t.call('POST', `/api/task/${taskId}/image`, { raw: { type: '', body: form('image', png) } }),
      'UNSUPPORTED_IMAGE_TYPE',
    );
    expectError(
      await t.call('POST', `/api/task/${taskId}/image`, {
        json: { image: Buffer.from(png).toString('base64') },
      }),
      'UNSUPPORTED_IMAGE_TYPE',
    );
    expectError(
      await t.call('POST', `/api/task/${taskId}/image`, { json: { image: 'not base64!' } }),
      'INVALID_PARAMETER',
      'body.image',
    );
    expectError(
      await t.call('POST', `/api/task/${taskId}/image`, { json: { picture: 'AAAA' } }),
      'INVALID_PARAMETER',
      'body.picture',
    );
    expectError(
      await t.call('POST', `/api/task/${taskId}/image`, {
        raw: { type: 'image/png', body: new Uint8Array(0) },
      }),
      'INVALID_PARAMETER',
    );
    expectError(
      await t.call('POST', `/api/task/${taskId}/image?enhance=2`, { raw: { type: 'image/png', body: png } }),
      'INVALID_PARAMETER',
      'query.enhance',
    );
    expectError(
      await t.call('POST', `/api/task/${taskId}/image?image_id=abc`, {
        raw: { type: 'image/png', body: png },
      }),
      'INVALID_PARAMETER',
      'query.image_id',
    );
    expectError(
      await t.call('POST', `/api/task/${taskId}/image`, { raw: { type: 'image/gif', body: png } }),
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const big = new Uint8Array(21 * 1024 * 1024);
    expectError(
      await t.call('POST', `/api/task/${taskId}/image`, { raw: { type: 'image/jpeg', body: big } }),
      'BODY_TOO_LARGE',
      '20 MiB',
    );
    expectError(
      await t.call('POST', `/api/task/${taskId}/image`, { raw: { type: '', body: form('image', big) } }),
      'BODY_TOO_LARGE',
    );
    expectError(
      await t.call('POST', '/api/task/00000000-0000-4000-8000-000000000000/image', {
        raw: { type: 'image/png', body: png },
      }),
      'TASK_NOT_FOUND',
    );
  });

  it('image upload to a video task, diff upload', async () => {
    const videoTask = await startVideoTask();
    expectError(
      await t.call('POST', `/api/task/${videoTask}/image`, {
        raw: { type: 'image/png', body: new Uint8Array([1]) },
      }),
      'WRONG_TASK_MODE',
    );
    const { task_id: diffTask } = expectOk(
      await t.call('POST', '/api/task', { json: { mode: 'diff', zapk_id: 'builtin', app_ids: ['change'] } }),
    ) as { task_id: string };
    expectError(
      await t.call('POST', `/api/task/${diffTask}/diff_image`, {
        json: { image_a: 'AAAA', image_b: 'AAAA' },
      }),
      'UNSUPPORTED_IMAGE_TYPE',
      'body.image_a',
    );
    expectError(
      await t.call('POST', `/api/task/${diffTask}/diff_image`, { json: { image_a: 'AAAA' } }),
      'INVALID_PARAMETER',
      'body.image_b: is required',
    );
    expectError(
      await t.call('POST', `/api/task/${diffTask}/diff_image`, {
        raw: { type: 'image/png', body: new Uint8Array([1]) },
      }),
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await t.call('POST', `/api/task/${diffTask}/image`, { json: { image: 'AAAA' } }),
      'WRONG_TASK_MODE',
    );
  });

  it('AI video, streams and optimization', async () => {
    const videoTask = await startVideoTask();
    const live = expectOk(
      await t.call('POST', `/api/task/${videoTask}/ailive`, {
        json: { app_ids: ['person'], rtmp: 'rtmp://127.0.0.1/live/x', bitrate: 2000 },
      }),
    ) as { stream: string; hls_url: string; rtmp: string; bitrate: number };
    // The contract's three fields, and the extensions: the bitrate step and the size it is encoded at.
    expect(Object.keys(live).sort()).toEqual(['bitrate', 'height', 'hls_url', 'rtmp', 'stream', 'width']);
    expect(live.bitrate).toBe(2000);
    expect(live.rtmp).toBe('rtmp://127.0.0.1/live/x');
    expect(live.hls_url).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:\\d+/api/task/${videoTask}/livestream/`),
    );
    expectError(
      await t.call('POST', `/api/task/${videoTask}/ailive`, { json: { app_ids: ['vehicle'] } }),
      'INVALID_PARAMETER',
      'body.app_ids[0]',
    );
    expectError(
      await t.call('POST', `/api/task/${videoTask}/ailive`, {
        json: { app_ids: ['person'], rtmp: 'http://x' },
      }),
      'INVALID_PARAMETER',
      'body.rtmp',
    );
    expectError(
      await t.call('POST', `/api/task/${videoTask}/ailive`, {
        json: { app_ids: ['person'], bitrate: 'fast' },
      }),
      'INVALID_PARAMETER',
      'body.bitrate',
    );
    expectError(
      await t.call('POST', `/api/task/${videoTask}/ailive`, { json: {} }),
      'INVALID_PARAMETER',
      'body.app_ids: is required',
    );
    expectError(await t.call('DELETE', `/api/task/${videoTask}/livestream/nope`), 'STREAM_NOT_FOUND');
    expectError(
      await t.call('POST', '/api/stream', { json: { video_url: 'rtsp://127.0.0.1:1/cam' } }),
      'STREAM_UNAVAILABLE',
      'video_url',
    );
    expectError(
      await t.call('POST', '/api/stream', { json: { video_url: 'gopher://x' } }),
      'INVALID_PARAMETER',
      'body.video_url',
    );
    expectError(
      await t.call('POST', '/api/stream', { json: {} }),
      'INVALID_PARAMETER',
      'body.video_url: is required',
    );
    expectError(await t.call('DELETE', '/api/stream/nope'), 'STREAM_NOT_FOUND');
    const run = expectOk(
      await t.call('POST', `/api/task/${videoTask}/optimization`, {
        json: { app_ids: ['person'], duration: 600, max_samples: 100 },
      }),
    ) as { optimization_id: string };
    expect(Object.keys(run)).toEqual(['optimization_id']);
    expectOk(await t.call('GET', `/api/task/${videoTask}/optimization/${run.optimization_id}`));
    expectError(
      await t.call('POST', `/api/task/${videoTask}/optimization`, {
        json: { app_ids: ['person'], duration: -5 },
      }),
      'INVALID_PARAMETER',
      'body.duration',
    );
    expectError(await t.call('GET', `/api/task/${videoTask}/optimization/o1`), 'OPTIMIZATION_NOT_FOUND');
    expectError(
      await t.call('GET', `/api/task/${videoTask}/optimization/o1/export`),
      'OPTIMIZATION_NOT_FOUND',
    );
    expectError(
      await t.call('GET', '/api/task/00000000-0000-4000-8000-000000000000/optimization/o1'),
      'TASK_NOT_FOUND',
    );
    expectOk(await t.call('DELETE', `/api/task/${videoTask}`));
    expectError(
      await t.call('POST', `/api/task/${videoTask}/ailive`, { json: { app_ids: ['person'] } }),
      'TASK_CLOSED',
    );
  });
});
