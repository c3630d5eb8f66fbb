import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildZapk } from '../engine/packages/zapk';
import type { TaskView } from '../engine/tasks/schema';
import { ffmpegChildrenOf, isAlive } from './helpers/child';
import { ADMIN_PASSWORD, startTestEngine, VIDEO } from './helpers/engine';
import { signIn, spawnEngine } from './helpers/engine-process';
import { eventually } from './helpers/eventually';

const ROOT = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'vc-restart-'));
const children: ChildProcess[] = [];

async function call(url: string, token: string, method: string, path: string, json?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
  return (await response.json()) as { code: number; msg: string; data: never };
}

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

describe('kill -9 and restart', () => {
  it('keeps packages, rules, tasks and tokens, and resumes live tasks', async () => {
    const dataDir = join(work, 'data');
    const first = await spawnEngine(dataDir, ADMIN_PASSWORD);
    children.push(first.child);
    const token = await signIn(first.url, ADMIN_PASSWORD);

    const zapk = join(work, 'example.zapk');
    await buildZapk(resolve(ROOT, 'examples/coco-yolox-nano/manifest.json'), zapk);
    const form = new FormData();
    form.append('file', new Blob([readFileSync(zapk)]), 'example.zapk');
    const installed = await fetch(`${first.url}/api/zapk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(((await installed.json()) as { code: number }).code).toBe(0);

    const rule = {
      interval: 7,
      classes: [
        {
          class_id: '0',
          name: 'pedestrian',
          color: '#abcdef',
          threshold: 0.42,
          min_pixel: 5,
          max_pixel: 500,
        },
      ],
    };
    expect((await call(first.url, token, 'PUT', '/api/zapk/coco-yolox-nano/app/person', { rule })).code).toBe(
      0,
    );
    // The video task's source is a copy, so the test can take it away while the engine is down.
    const source = join(work, 'camera.avi');
    copyFileSync(VIDEO, source);
    const video = await call(first.url, token, 'POST', '/api/task', {
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person'],
      video_url: source,
      business_id: 'b-9',
    });
    const image = await call(first.url, token, 'POST', '/api/task', {
      mode: 'image',
      zapk_id: 'coco-yolox-nano',
      app_ids: ['vehicle'],
    });
    const closed = await call(first.url, token, 'POST', '/api/task', {
      mode: 'image',
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person'],
    });
    expect([video.code, image.code, closed.code]).toEqual([0, 0, 0]);
    const closedId = (closed.data as { task_id: string }).task_id;
    await call(first.url, token, 'DELETE', `/api/task/${closedId}`);
    const before = (await call(first.url, token, 'GET', '/api/tasks')).data as Array<Record<string, unknown>>;

    // The running video task has its ffmpeg; kill -9 of the engine must take it along. Counted once
    // the task has dropped its clip recording (the fixture's MS-MPEG4v3 cannot be kept), which opens a
    // second ffmpeg before the first ends.
    const videoId = (video.data as { task_id: string }).task_id;
    const ffmpegPids = await eventually('the video task on one ffmpeg, its recording off', async () => {
      const { health } = (await call(first.url, token, 'GET', `/api/task/${videoId}`)).data as TaskView;
      const pids = ffmpegChildrenOf(first.child.pid as number);
      return health?.clips === 'off' && pids.length === 1 && pids;
    });
    first.child.kill('SIGKILL');
    await new Promise((done) => first.child.once('exit', done));
    await expect.poll(() => ffmpegPids.filter((pid) => isAlive(pid)), { timeout: 2_000 }).toEqual([]);

    const second = await spawnEngine(dataDir, ADMIN_PASSWORD);
    children.push(second.child);
    const packages = (await call(second.url, token, 'GET', '/api/zapk')).data as Array<{
      zapk_id: string;
      apps: Record<string, { rule: unknown }>;
    }>;
    expect(packages.map((p) => p.zapk_id)).toEqual(['builtin', 'coco-yolox-nano']);
    expect(packages[1]?.apps.person?.rule).toEqual({ interval: 7, classes: { '0': rule.classes[0] } });

    const after = (await call(second.url, token, 'GET', '/api/tasks')).data as Array<Record<string, unknown>>;
    expect(after.map((task) => task.task_id)).toEqual(before.map((task) => task.task_id));
    // Live figures (status, dump, health) start afresh in the new process; everything stored survives.
    const strip = ({ dump: _d, status: _s, health: _h, ...rest }: Record<string, unknown>) => rest;
    expect(after.map(strip)).toEqual(before.map(strip));
    expect(after.find((task) => task.task_id === closedId)).toMatchObject({
      status: 'closed',
      close_code: 1,
    });

    // The live video task reopens its source on its own.
    await expect
      .poll(
        async () =>
          (
            (await call(second.url, token, 'GET', `/api/task/${videoId}`)).data as {
              status: string;
              dump: string;
            }
          ).status,
        {
          timeout: 10_000,
        },
      )
      .toBe('running');
    second.child.kill('SIGKILL');
  });

  it('a video task whose source is gone after a restart reconnects, then closes with close_code 2 after 5 min', async () => {
    const dataDir = join(work, 'lost');
    const source = join(work, 'lost.avi');
    copyFileSync(VIDEO, source);
    let t = await startTestEngine(dataDir);
    const { data } = (
      await t.call('POST', '/api/task', {
        json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: source },
      })
    ).body as {
      data: { task_id: string };
    };
    await t.engine.close();
    rmSync(source);

    t = await startTestEngine(dataDir);
    const status = async () => (await t.call('GET', `/api/task/${data.task_id}`)).body.data as TaskView;
    await expect.poll(async () => (await status()).status, { timeout: 10_000 }).toBe('stream_lost');
    expect((await status()).health.stream).toMatchObject({
      state: 'reconnecting',
      // Checked against the media folders before ffmpeg runs: a file gone answers as one never there.
      last_error: "no video file at this path in the engine's media folders",
    });
    t.advance(5 * 60_000);
    expect(await status()).toMatchObject({ status: 'closed', close_code: 2 });
    expect((await status()).health.stream).toBeNull();
    await t.stop();
  });
});
