import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageResult } from '../engine/events/schema';
import type { AppConfig, Polygon, TaskView } from '../engine/tasks/schema';
import { FIXTURES, startTestEngine, type TestEngine } from './helpers/engine';
import { installExamplePackage } from './helpers/example-package';

/**
 * Zones, masks and calibration in app_configs (extensions): validated like the polygon, stored with
 * the task, kept by updates that leave them out (a calibration removed by null), and applied to the objects of an image task (basketball1.png,
 * 640x480: one player left of x = 200, one right of x = 420).
 */

const BASKETBALL = readFileSync(join(FIXTURES, 'media', 'basketball1.png'));

const rect = (x1: number, y1: number, x2: number, y2: number): Polygon => [
  [x1, y1],
  [x2, y1],
  [x2, y2],
  [x1, y2],
];
const LEFT = rect(0, 0, 320, 480);
const RIGHT = rect(320, 0, 640, 480);
const BOWTIE: Polygon = [
  [0, 0],
  [100, 100],
  [100, 0],
  [0, 100],
];

let t: TestEngine;

beforeAll(async () => {
  t = await startTestEngine();
  expect(await installExamplePackage(t)).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

const start = (config: Omit<AppConfig, 'app_id'>) =>
  t.call('POST', '/api/task', {
    json: {
      mode: 'image',
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person'],
      app_configs: [{ app_id: 'person', ...config }],
    },
  });

async function started(config: Omit<AppConfig, 'app_id'>): Promise<string> {
  const answer = await start(config);
  expect(answer.body.msg).toBe('success');
  return (answer.body.data as { task_id: string }).task_id;
}

const configsOf = async (taskId: string) =>
  ((await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView).app_configs;

describe('zones and masks of app_configs', () => {
  it.each([
    [
      'a self-crossing zone',
      {
        polygon: [],
        zones: [
          { name: 'a', polygon: LEFT },
          { name: 'b', polygon: BOWTIE },
        ],
      },
      'app_configs[0].zones[1].polygon',
      'the polygon crosses itself',
    ],
    [
      'a zone name twice',
      {
        polygon: [],
        zones: [
          { name: 'a', polygon: LEFT },
          { name: 'a', polygon: RIGHT },
        ],
      },
      'app_configs[0].zones[1].name',
      'duplicate zone name "a"',
    ],
    [
      'a 2-point mask',
      {
        polygon: [],
        masks: [
          [
            [0, 0],
            [10, 10],
          ],
        ],
      },
      'app_configs[0].masks[0]',
      'a zone or mask needs at least 3 points',
    ],
  ])('refuses %s with the field at fault, creating nothing', async (_name, config, field, problem) => {
    const before = ((await t.call('GET', '/api/tasks')).body.data as unknown[]).length;
    expect((await start(config as Omit<AppConfig, 'app_id'>)).body).toEqual({
      code: 40001,
      msg: `body.${field}: ${problem}`,
      field,
    });
    expect(((await t.call('GET', '/api/tasks')).body.data as unknown[]).length).toBe(before);
  });

  it('stores them with the task; an update without them keeps them, an empty list clears them', async () => {
    const zones = [
      { name: 'left', polygon: LEFT },
      { name: 'right', polygon: RIGHT },
    ];
    const taskId = await started({ polygon: [], zones, masks: [rect(0, 0, 10, 10)] });
    expect(await configsOf(taskId)).toEqual([
      { app_id: 'person', polygon: [], zones, masks: [rect(0, 0, 10, 10)] },
    ]);

    const polygon = rect(0, 0, 600, 480);
    await t.call('PUT', `/api/task/${taskId}`, { json: { app_configs: [{ app_id: 'person', polygon }] } });
    expect(await configsOf(taskId)).toEqual([
      { app_id: 'person', polygon, zones, masks: [rect(0, 0, 10, 10)] },
    ]);

    await t.call('PUT', `/api/task/${taskId}`, {
      json: { app_configs: [{ app_id: 'person', polygon, zones: [], masks: [] }] },
    });
    expect(await configsOf(taskId)).toEqual([{ app_id: 'person', polygon, zones: [], masks: [] }]);
  });

  it('keeps the calibration through an update that leaves it out, and removes it on null', async () => {
    const calibration = {
      image: rect(100, 100, 500, 400),
      ground: [
        [0, 0],
        [8, 0],
        [8, 6],
        [0, 6],
      ],
    };
    const taskId = await started({ polygon: [], calibration });
    const polygon = rect(0, 0, 600, 480);
    await t.call('PUT', `/api/task/${taskId}`, { json: { app_configs: [{ app_id: 'person', polygon }] } });
    expect(await configsOf(taskId)).toEqual([{ app_id: 'person', polygon, calibration }]);

    const cleared = await t.call('PUT', `/api/task/${taskId}`, {
      json: { app_configs: [{ app_id: 'person', polygon, calibration: null }] },
    });
    expect((cleared.body.data as TaskView).app_configs).toEqual([{ app_id: 'person', polygon }]);
    expect(await configsOf(taskId)).toEqual([{ app_id: 'person', polygon }]);
  });

  it('names the zone of each person, and ignores the one standing in a mask', async () => {
    const zones = [
      { name: 'left', polygon: LEFT },
      { name: 'right', polygon: RIGHT },
    ];
    const persons = async (taskId: string) => {
      const answer = await t.call('POST', `/api/task/${taskId}/image`, {
        raw: { type: 'image/png', body: new Uint8Array(BASKETBALL) },
      });
      const data = answer.body.data as ImageResult;
      return data.rules
        .flatMap((rule) => rule.objects)
        .sort((a, b) => a.x - b.x)
        .map((o) => [o.x < 320 ? 'left player' : 'right player', o.zones]);
    };

    expect(await persons(await started({ polygon: [], zones }))).toEqual([
      ['left player', ['left']],
      ['right player', ['right']],
    ]);
    expect(await persons(await started({ polygon: [], zones, masks: [RIGHT] }))).toEqual([
      ['left player', ['left']],
    ]);
  });
});
