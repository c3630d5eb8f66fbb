import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../engine/api/errors';
import { ADMIN_PASSWORD, VIDEO } from './helpers/engine';
import { type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';

/**
 * What a video source may be (finding 8), against the engine in a process of its own: a text file
 * is no video, whatever its name. The fixture video plays.
 */

const work = mkdtempSync(join(tmpdir(), 'vc-source-limits-'));

/** Text files ffmpeg would render as video (its tty demuxer), a .txt, and text named like a video. */
const TEXT_NAMES = [
  'notes.nfo',
  'notes.asc',
  'notes.ans',
  'file_id.diz',
  'logo.art',
  'screen.vt',
  'notes.txt',
  'clip.mp4',
];
const TTY = /\.(nfo|asc|ans|diz|art|vt)$/;

let engine: EngineProcess;
let pid: number;
let token: string;

beforeAll(async () => {
  for (const name of TEXT_NAMES)
    writeFileSync(
      join(work, name),
      '\x1b[1;31mREADME\x1b[0m\r\nroot:x:0:0:root:/root:/bin/bash\r\n'.repeat(20),
    );
  engine = await spawnEngine(join(work, 'data'), ADMIN_PASSWORD);
  pid = engine.child.pid as number;
  token = await signIn(engine.url, ADMIN_PASSWORD);
}, 180_000);

afterAll(async () => {
  await stopEngine(engine);
  rmSync(work, { recursive: true, force: true });
});

async function call(method: string, path: string, json?: unknown) {
  const answer = await fetch(`${engine.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
  const body = (await answer.json()) as { code: number; msg: string; data: never };
  return { status: answer.status, ...body };
}

const preview = (videoUrl: string) => call('POST', '/api/stream', { video_url: videoUrl });
const videoTask = (videoUrl: string) =>
  call('POST', '/api/task', { zapk_id: 'builtin', app_ids: ['motion'], video_url: videoUrl });

/** The engine's ffmpeg processes (each starts through setpriv, which becomes ffmpeg). */
function ffmpegs(): string {
  try {
    return execFileSync('pgrep', ['-P', String(pid), 'ffmpeg'])
      .toString()
      .trim();
  } catch {
    return '';
  }
}

const taskCount = async () => ((await call('GET', '/api/tasks')).data as unknown[]).length;

describe('local files that are not video', () => {
  it('refuses text files as sources whatever their name, starting nothing', async () => {
    const tasks = await taskCount();
    for (const name of TEXT_NAMES) {
      const file = join(work, name);
      for (const answer of [await preview(file), await videoTask(file)]) {
        expect({ status: answer.status, code: answer.code }, `${name}: ${answer.msg}`).toEqual({
          status: 503,
          code: ERRORS.STREAM_UNAVAILABLE.code,
        });
        if (TTY.test(name)) expect(answer.msg).toMatch(/it is not video: ffmpeg reads it as "tty"/);
      }
    }
    expect(await taskCount()).toBe(tasks);
    expect(ffmpegs()).toBe('');
  }, 120_000);
});

describe('video sources', () => {
  it('plays the fixture video, in a preview and a task', async () => {
    const shown = await preview(VIDEO);
    expect(shown.data, shown.msg).toMatchObject({ width: 768, height: 576 });
    expect(
      (await call('DELETE', `/api/stream/${(shown.data as { stream_id: string }).stream_id}`)).code,
    ).toBe(0);
    const started = await videoTask(VIDEO);
    expect(started.code, started.msg).toBe(0);
    const taskId = (started.data as { task_id: string }).task_id;
    expect((await call('GET', `/api/task/${taskId}`)).data).toMatchObject({
      dump: expect.stringContaining('source 768x576'),
    });
    expect((await call('DELETE', `/api/task/${taskId}`)).code).toBe(0);
  }, 120_000);
});
