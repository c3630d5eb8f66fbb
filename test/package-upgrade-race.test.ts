import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferencePool } from '../engine/inference/pool';
import type { Manifest } from '../engine/packages/manifest';
import { buildZapk } from '../engine/packages/zapk';
import { VideoAnalysis } from '../engine/pipeline/video-analysis';
import { type Answer, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { EXAMPLE_MANIFEST, installExamplePackage } from './helpers/example-package';

/**
 * An upgrade and a task start that overlap, each held at its slow step (the upgrade's model check,
 * the task's source opening) while the other runs: whichever order, no task runs on a package that
 * changed under it. The held step is the real one, resumed when the test lets it go.
 */
const work = mkdtempSync(join(tmpdir(), 'vc-upgrade-race-'));
const V2 = join(work, 'v2.zapk');
let t: TestEngine;
/** Gates of held steps: a failing test must not leave a step waiting forever. */
const gates: Array<() => void> = [];

beforeAll(async () => {
  t = await startTestEngine();
  expect(await installExamplePackage(t)).toBe(200);
  // The example package as version 2.0.0, its files named by absolute path from another folder.
  const manifest = JSON.parse(readFileSync(EXAMPLE_MANIFEST, 'utf8')) as Manifest;
  const model = manifest.models['yolox-nano'];
  if (!model?.file || typeof model.labels !== 'string') throw new Error('the example manifest changed');
  const from = dirname(EXAMPLE_MANIFEST);
  manifest.models['yolox-nano'] = {
    ...model,
    file: resolve(from, model.file),
    labels: resolve(from, model.labels),
  };
  writeFileSync(join(work, 'manifest.json'), JSON.stringify({ ...manifest, version: '2.0.0' }));
  await buildZapk(join(work, 'manifest.json'), V2);
});

afterEach(async () => {
  for (const open of gates.splice(0)) open();
  vi.restoreAllMocks();
  const tasks = (await t.call('GET', '/api/tasks')).body.data as Array<{ task_id: string; status: string }>;
  for (const task of tasks.filter((task) => task.status !== 'closed'))
    await t.call('DELETE', `/api/task/${task.task_id}`);
});

afterAll(async () => {
  await t?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** A step held until the test opens it; `reached` resolves once the step has been entered. */
function hold<A extends unknown[], R>(target: object, method: string, original: (...args: A) => Promise<R>) {
  let open!: () => void;
  let entered!: () => void;
  const opened = new Promise<void>((done) => (open = done));
  gates.push(open);
  const reached = new Promise<void>((done) => (entered = done));
  vi.spyOn(target as Record<string, (...args: A) => Promise<R>>, method).mockImplementation(async function (
    this: unknown,
    ...args: A
  ) {
    entered();
    await opened;
    return original.apply(this, args);
  });
  return { open, reached };
}

const upgrade = () => {
  const form = new FormData();
  form.append('file', new Blob([readFileSync(V2)]), 'v2.zapk');
  return t.call('POST', '/api/zapk', { raw: { type: '', body: form } });
};
const startVideoTask = () =>
  t.call('POST', '/api/task', {
    json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: VIDEO },
  });
const outcome = (answer: Answer) => ({ status: answer.status, code: answer.body.code });
const version = async () =>
  ((await t.call('GET', '/api/zapk')).body.data as Array<{ zapk_id: string; version: string }>).find(
    (p) => p.zapk_id === 'coco-yolox-nano',
  )?.version;
const unpacked = () =>
  readdirSync(join(t.dataDir, 'packages')).filter((name) => name.startsWith('coco-yolox-nano-'));

describe('an upgrade and a task start that overlap', () => {
  it('upgrade begins, task starts, upgrade commits: the upgrade is refused at commit with 409 40901', async () => {
    const before = unpacked();
    const check = hold(InferencePool.prototype, 'checkModel', InferencePool.prototype.checkModel);
    const upgrading = upgrade();
    // The upgrade passed its first in-use check and unpacked version 2; now a task starts.
    await check.reached;
    const task = await startVideoTask();
    expect(outcome(task)).toEqual({ status: 200, code: 0 });
    check.open();
    const answer = await upgrading;
    expect(outcome(answer)).toEqual({ status: 409, code: 40901 });
    expect(answer.body.msg).toMatch(/used by a running task; close the task before it is upgraded/);
    expect(await version()).toBe('1.0.0');
    // Version 2's unpacked folder went with the refusal; version 1's is the one the task runs.
    expect(unpacked()).toEqual(before);
    const { task_id } = task.body.data as { task_id: string };
    expect((await t.call('GET', `/api/task/${task_id}`)).body.data).toMatchObject({ status: 'running' });
  });

  it('task begins starting, upgrade runs, task commits: the upgrade (and an uninstall) gets 409 40901', async () => {
    const before = unpacked();
    const open = hold(VideoAnalysis.prototype, 'start', VideoAnalysis.prototype.start);
    const starting = startVideoTask();
    // The task passed its checks and is opening its source; it is not stored yet.
    await open.reached;
    const answer = await upgrade();
    expect(outcome(answer)).toEqual({ status: 409, code: 40901 });
    expect(outcome(await t.call('DELETE', '/api/zapk/coco-yolox-nano'))).toEqual({
      status: 409,
      code: 40901,
    });
    open.open();
    const task = await starting;
    expect(outcome(task)).toEqual({ status: 200, code: 0 });
    expect(await version()).toBe('1.0.0');
    expect(unpacked()).toEqual(before);
  });

  it('a start that failed or a closed task leaves the package free to upgrade', async () => {
    const failed = await t.call('POST', '/api/task', {
      json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: join(work, 'missing.avi') },
    });
    expect(outcome(failed)).toEqual({ status: 503, code: 50301 });
    expect(outcome(await upgrade())).toEqual({ status: 200, code: 0 });
    expect(await version()).toBe('2.0.0');
  });
});
