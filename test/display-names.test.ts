import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../engine/packages/manifest';
import { type Answer, startTestEngine, type TestEngine } from './helpers/engine';
import { motionManifest, writeValidZapk } from './helpers/zip-fixtures';

/**
 * Names operators see (packages, applications, classes, labels, tasks, zones, device ids) refuse
 * control characters (NUL, newline, C1) and the bidirectional controls that make a name read as
 * something else (U+202E RIGHT-TO-LEFT OVERRIDE: "gate‮gpj.exe" shows as "gateexe.jpg"); right-to-left
 * scripts, CJK and emoji sequences stay welcome.
 */

const HOSTILE = [
  ['NUL', 'Gate\u0000 1'],
  ['newline', 'Gate\n1'],
  ['C1 control', 'Gate\u0085 1'],
  ['right-to-left override', 'gate\u202egpj.exe'],
  ['left-to-right embedding', 'gate\u202a1'],
  ['first-strong isolate', 'gate\u2068 1'],
  ['right-to-left mark', 'gate\u200f1'],
] as const;
const WELCOME = ['بوابة الشمال', '北门 2', '👷\u200d♀️ crew', 'Café Ünter'];

let t: TestEngine;
let work: string;
beforeAll(async () => {
  t = await startTestEngine();
  work = mkdtempSync(join(tmpdir(), 'vc-names-'));
});
afterAll(async () => {
  await t?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function install(manifest: Manifest): Promise<Answer> {
  const file = join(work, `${Math.random().toString(36).slice(2)}.zapk`);
  writeValidZapk(file, manifest);
  const form = new FormData();
  form.append('file', new Blob([readFileSync(file)]), 'names.zapk');
  return t.call('POST', '/api/zapk', { raw: { type: '', body: form } });
}

const installed = async () =>
  ((await t.call('GET', '/api/zapk')).body.data as { zapk_id: string }[]).map((p) => p.zapk_id);

const expectRefused = (answer: Answer, code: number, msg: RegExp, what: string) => {
  expect({ status: answer.status, code: answer.body.code }, `${what}: ${answer.body.msg}`).toEqual({
    status: Math.floor(code / 100),
    code,
  });
  expect(answer.body.msg, what).toMatch(msg);
};

describe('package names', () => {
  it('refuses a package whose name, an app name, a class name or a label holds such a character, installing nothing', async () => {
    for (const [what, text] of HOSTILE) {
      const variants: [string, (m: Manifest) => void, RegExp][] = [
        ['package name', (m) => (m.name = text), /manifest\.name: must not be blank or contain control/],
        [
          'app name',
          (m) => ((m.apps[0] as { name: string }).name = text),
          /manifest\.apps\[0\]\.name: must not be blank or contain control/,
        ],
        [
          'class name',
          (m) => ((m.apps[0]?.rule.classes?.[0] as { name: string }).name = text),
          /classes.*name: must not be blank or contain control/,
        ],
        [
          'label',
          (m) => ((m.models.motion as { labels: string[] }).labels = [text]),
          /labels: label on line 1 contains a control or bidirectional-override character/,
        ],
      ];
      for (const [field, change, msg] of variants) {
        const manifest = motionManifest();
        manifest.zapk_id = 'names-hostile';
        change(manifest);
        expectRefused(await install(manifest), 40003, msg, `${field} with a ${what}`);
      }
    }
    expect(await installed()).not.toContain('names-hostile');
  });

  it('installs names in any script', async () => {
    const manifest = motionManifest();
    manifest.zapk_id = 'names-welcome';
    manifest.name = WELCOME[0] as string;
    (manifest.apps[0] as { name: string }).name = WELCOME[1] as string;
    const answer = await install(manifest);
    expect(answer.body.code, answer.body.msg).toBe(0);
    await t.call('DELETE', '/api/zapk/names-welcome');
  });

  it('refuses such an app name in an update, changing nothing', async () => {
    for (const [what, text] of HOSTILE) {
      const answer = await t.call('PUT', '/api/zapk/builtin/app/motion', { json: { name: text } });
      expectRefused(answer, 40001, /body\.name: must not be blank or contain control/, what);
    }
    const listing = (await t.call('GET', '/api/zapk')).body.data as { zapk_id: string; apps: unknown }[];
    const builtin = JSON.stringify(listing.find((p) => p.zapk_id === 'builtin'));
    for (const [, text] of HOSTILE) expect(builtin).not.toContain(text);
  });
});

describe('task, zone and device names', () => {
  const start = (body: Record<string, unknown>) =>
    t.call('POST', '/api/task', {
      json: { zapk_id: 'builtin', app_ids: ['motion'], mode: 'image', ...body },
    });
  const square = [
    [0, 0],
    [100, 0],
    [100, 100],
  ];

  it('refuses them with such a character, naming the field, and starts nothing', async () => {
    const before = ((await t.call('GET', '/api/tasks')).body.data as unknown[]).length;
    for (const [what, text] of HOSTILE) {
      const named = await start({ name: text });
      expectRefused(named, 40001, /body\.name: must not be blank or contain control/, `task name, ${what}`);
      expect(named.body.field).toBe('name');
      const device = await start({ device_id: text });
      expectRefused(device, 40001, /body\.device_id: must not contain control/, `device_id, ${what}`);
      const zoned = await start({
        app_configs: [{ app_id: 'motion', polygon: [], zones: [{ name: text, polygon: square }] }],
      });
      expectRefused(zoned, 40001, /zones.*name: must not be blank or contain control/, `zone name, ${what}`);
    }
    expect(((await t.call('GET', '/api/tasks')).body.data as unknown[]).length).toBe(before);
  });

  it('starts a task named in any script, with such zone names', async () => {
    const answer = await start({
      name: WELCOME[0],
      device_id: WELCOME[3],
      app_configs: [{ app_id: 'motion', polygon: [], zones: [{ name: WELCOME[2], polygon: square }] }],
    });
    expect(answer.body.code, answer.body.msg).toBe(0);
    const { task_id } = answer.body.data as { task_id: string };
    expect((await t.call('GET', `/api/task/${task_id}`)).body.data).toMatchObject({
      name: WELCOME[0],
      device_id: WELCOME[3],
    });
    await t.call('DELETE', `/api/task/${task_id}`);
  });
});
