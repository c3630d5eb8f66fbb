import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { Clip, ClipPage } from '../engine/clips/clip-schema';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { ADMIN_PASSWORD } from './helpers/engine';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { eventually } from './helpers/eventually';
import { slidingBoxClip } from './helpers/synthetic-clip';

/**
 * kill -9 of an engine process while it writes a clip: the built-in motion app fires on every
 * frame of a box crossing a 16 s scene, and clips of 2 s before to 1 s after are cut one after the
 * other. The engine is killed as soon as a clip's .partial file appears (a cut under way), then
 * started again on the same data dir.
 */

const FFPROBE = findFfmpeg().replace(/ffmpeg$/, 'ffprobe');
const work = mkdtempSync(join(tmpdir(), 'vc-clips-restart-'));
const engines: EngineProcess[] = [];

afterAll(async () => {
  for (const engine of engines) await stopEngine(engine);
  rmSync(work, { recursive: true, force: true });
});

/** Files of a data dir's clips folder, the buffer aside. */
function clipFiles(dataDir: string): string[] {
  const root = join(dataDir, 'clips');
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter(
    (name) => !name.startsWith('buffer') && statSync(join(root, name)).isFile(),
  );
}

const list = async (url: string, token: string) =>
  (await callApi<ClipPage>(url, token, 'GET', '/api/clips?limit=200')).items;

describe('kill -9 during a clip write', () => {
  it('leaves no broken clip listed: every ready clip is whole, the pending ones become none', async () => {
    const source = join(work, 'slide.mp4');
    slidingBoxClip(source, '60*t-360', 16);
    const dataDir = join(work, 'data');
    const first = await spawnEngine(dataDir, ADMIN_PASSWORD);
    engines.push(first);
    let token = await signIn(first.url, ADMIN_PASSWORD);
    await callApi(first.url, token, 'PUT', '/api/settings/clips', { pre_s: 2, post_s: 1, max_post_s: 1 });
    await callApi(first.url, token, 'PUT', '/api/zapk/builtin/app/motion', { rule: { interval: 0 } });
    const task = await callApi<{ task_id: string }>(first.url, token, 'POST', '/api/task', {
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: source,
    });
    const taskDir = join(dataDir, 'clips', task.task_id);
    await eventually(
      'a clip ready',
      async () => (await list(first.url, token)).some((clip) => clip.state === 'ready'),
      90_000,
    );
    // A cut under way: its .partial is being written.
    await eventually(
      'a clip being written',
      () => existsSync(taskDir) && readdirSync(taskDir).some((name) => name.endsWith('.partial')),
      90_000,
      5,
    );
    first.child.kill('SIGKILL');
    await new Promise((done) => first.child.once('exit', done));
    // What it left: at least one .partial (the orphaned cut may still be finishing it).
    await sleep(1000);
    const left = clipFiles(dataDir);
    expect(left.some((name) => name.endsWith('.partial') || name.startsWith('work'))).toBe(true);

    const second = await spawnEngine(dataDir, ADMIN_PASSWORD);
    engines.push(second);
    token = await signIn(second.url, ADMIN_PASSWORD);
    // Whatever the first engine had made or begun, as the second lists it at once.
    const before = await list(second.url, token);
    // Its resumed task goes on making clips: closed, its last ones are cut at once.
    await callApi(second.url, token, 'DELETE', `/api/task/${task.task_id}`);
    const clips = await eventually(
      'no clip pending',
      async () => {
        const all = await list(second.url, token);
        return all.every((clip) => clip.state !== 'pending') && all;
      },
      60_000,
    );
    const restarted = clips.filter((clip) => clip.reason === 'engine_restarted');
    expect(restarted.length).toBeGreaterThanOrEqual(1);
    for (const clip of restarted) expect(before.find((b) => b.clip_id === clip.clip_id)?.state).toBe('none');
    const ready = clips.filter((clip: Clip) => clip.state === 'ready');
    expect(ready.length).toBeGreaterThanOrEqual(1);
    for (const clip of ready) {
      const file = join(taskDir, `${clip.clip_id}.mp4`);
      expect(statSync(file).size).toBe(clip.bytes);
      // ffprobe reads it whole: every frame decodes, and nothing is reported broken.
      const probed = spawnSync(FFPROBE, [
        ...['-v', 'error', '-count_frames', '-show_entries', 'stream=nb_read_frames', '-of', 'json', file],
      ]);
      expect(probed.status).toBe(0);
      expect(probed.stderr.toString()).toBe('');
      expect(Number(JSON.parse(probed.stdout.toString()).streams[0].nb_read_frames)).toBeGreaterThan(0);
    }
    // Nothing half written is left, and no file that no ready clip names.
    const readyFiles = new Set(ready.map((clip) => `${task.task_id}/${clip.clip_id}.mp4`));
    expect(clipFiles(dataDir).filter((name) => !readyFiles.has(name))).toEqual([]);
  }, 240_000);
});
