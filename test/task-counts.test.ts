import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackBody } from '../engine/events/schema';
import type { DirectionCounts } from '../engine/rules/counts';
import { compileCheck } from '../engine/schema/ajv';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { installExamplePackage } from './helpers/example-package';
import { Receiver } from './helpers/receiver';

/**
 * GET /api/task/{task_id}/counts on the fixture video played as a live camera: the example package's
 * time-series app "loiter" counts on a line across the walkway (the rules' count itself is checked
 * against a hand count in rules-fixture.test.ts).
 */

type Message = Extract<CallbackBody, { event: 'message' }>;
const checkBody = compileCheck(CallbackBody, 'callback');
/** Bottom to top at x = 320: "in" is rightward on screen. */
const LINE = [
  [320, 576],
  [320, 180],
];

let t: TestEngine;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestEngine();
  receiver = await Receiver.start();
  expect(await installExamplePackage(t)).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

describe('running line counts', () => {
  it('answers per app the crossings per class and direction that the events carry, behind the token', async () => {
    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['loiter', 'person'],
        video_url: VIDEO,
        report_url: receiver.url,
        app_configs: [{ app_id: 'loiter', polygon: LINE }],
      },
    });
    expect(started.body.code).toBe(0);
    const taskId = (started.body.data as { task_id: string }).task_id;
    const path = `/api/task/${taskId}/counts`;

    // A walker crosses leftward at about 7 s (the one of the first second may pass before analysis runs).
    const crossings = () =>
      receiver.accepted
        .map((r) => r.body as CallbackBody)
        .filter((b): b is Message => b.event === 'message' && b.task_id === taskId && b.app_id === 'loiter');
    await receiver.waitFor(
      'a crossing each way',
      () => crossings().some((m) => (m.data.rules[0]?.counts?.out ?? 0) > 0),
      60_000,
    );
    const answer = await t.call('GET', path);
    const last = crossings().at(-1) as Message;
    const counts = last.data.rules[0]?.counts as DirectionCounts;
    expect(answer.body).toEqual({
      code: 0,
      msg: 'success',
      data: {
        task_id: taskId,
        apps: [
          { app_id: 'loiter', line: { ...counts, classes: { '0': counts } }, zones: null },
          { app_id: 'person', line: null, zones: null },
        ],
      },
    });
    for (const message of crossings()) {
      const checked = checkBody(message);
      expect(checked.ok ? 'valid' : checked.error).toBe('valid');
      expect(
        message.data.rules.map((r) => [r.id, r.objects.every((o) => o.direction !== undefined)]),
      ).toEqual([['loiter:0', true]]);
    }

    expect((await t.call('GET', path, { token: null })).status).toBe(401);
    await t.call('DELETE', `/api/task/${taskId}`);
    expect((await t.call('GET', path)).body).toMatchObject({ code: 40902 });
    expect((await t.call('GET', '/api/task/00000000-0000-4000-8000-000000000000/counts')).status).toBe(404);
  }, 120_000);

  it("keeps a counting line's direction (extension), refuses one on a region, drops it when the line becomes a region", async () => {
    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['loiter'],
        video_url: VIDEO,
        app_configs: [{ app_id: 'loiter', polygon: LINE, line_direction: 'out' }],
      },
    });
    expect(started.body.code, JSON.stringify(started.body)).toBe(0);
    const taskId = (started.body.data as { task_id: string }).task_id;
    const configs = async () =>
      ((await t.call('GET', `/api/task/${taskId}`)).body.data as { app_configs: unknown[] }).app_configs;
    expect((await configs())[0]).toMatchObject({ app_id: 'loiter', polygon: LINE, line_direction: 'out' });

    const region = [
      [100, 100],
      [300, 100],
      [300, 300],
    ];
    const refused = await t.call('PUT', `/api/task/${taskId}`, {
      json: { app_configs: [{ app_id: 'loiter', polygon: region, line_direction: 'in' }] },
    });
    expect([refused.status, refused.body.code]).toEqual([400, 40001]);
    expect(refused.body.msg).toMatch(/line_direction: only a counting line/);
    const wrong = await t.call('PUT', `/api/task/${taskId}`, {
      json: { app_configs: [{ app_id: 'loiter', polygon: LINE, line_direction: 'up' }] },
    });
    expect(wrong.status).toBe(400);
    expect((await configs())[0]).toMatchObject({ polygon: LINE, line_direction: 'out' });

    const toRegion = await t.call('PUT', `/api/task/${taskId}`, {
      json: { app_configs: [{ app_id: 'loiter', polygon: region }] },
    });
    expect(toRegion.body.code).toBe(0);
    expect((await configs())[0]).not.toHaveProperty('line_direction');
    await t.call('DELETE', `/api/task/${taskId}`);
  });
});
