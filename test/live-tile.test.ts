import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { type Answer, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';

/**
 * Issue 34, the wall: an AI video scaled to a tile's width (the extension `width` of 4.10), encoded
 * at the width's step and at most 10 fps by a real ffmpeg, shared by the requests on one step; and
 * the console's focus and unfocus (a tile's video released as the same one is asked for again)
 * answered 200 every time (the issue saw a 500 once).
 */

const run = promisify(execFile);

let t: TestEngine;
let taskId: string;

beforeAll(async () => {
  t = await startTestEngine(undefined, undefined, { analysisFps: 2 });
  const started = await t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO },
  });
  expect(started.body.code).toBe(0);
  taskId = (started.body.data as { task_id: string }).task_id;
}, 60_000);

afterAll(async () => t?.stop());

interface AiLive {
  stream: string;
  hls_url: string;
  width: number;
  height: number;
}

const open = (body: Record<string, unknown> = {}) =>
  t.call('POST', `/api/task/${taskId}/ailive`, { json: { app_ids: ['motion'], ...body } });
const close = (stream: string) => t.call('DELETE', `/api/task/${taskId}/livestream/${stream}`);
const live = (answer: Answer) => {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ code: 0 });
  return answer.body.data as AiLive;
};
const videos = async () =>
  ((await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView).health.ai_video;

/** The size and frame count of the newest listed segment (1 s long) of a video. */
async function newestSegment(video: AiLive): Promise<{ size: string; frames: number }> {
  const token = encodeURIComponent(t.token);
  const list = await (await fetch(`${video.hls_url}?token=${token}`)).text();
  const uri = list
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('seg'))
    .at(-1) as string;
  const file = join(t.dataDir, `tile-${Date.now()}.ts`);
  writeFileSync(file, Buffer.from(await (await fetch(new URL(uri, video.hls_url))).arrayBuffer()));
  const { stdout } = await run('ffprobe', [
    ...['-v', 'error', '-select_streams', 'v', '-count_frames'],
    ...['-show_entries', 'stream=width,height,nb_read_frames', '-of', 'csv=p=0', file],
  ]);
  const [width, height, frames] = (stdout.trim().split('\n')[0] ?? '').split(',');
  return { size: `${width}x${height}`, frames: Number(frames) };
}

describe('an AI video for a tile', () => {
  it('is encoded at the width step, at most 10 fps, one encoder per step beside the full size', async () => {
    // The fixture is 768x576 at 10 fps; 700 px falls on the 640 step.
    const tile = live(await open({ width: 700, bitrate: 400 }));
    expect([tile.width, tile.height]).toEqual([640, 480]);
    const same = live(await open({ width: 640, bitrate: 400 }));
    expect([same.width, same.height]).toEqual([640, 480]);
    const full = live(await open());
    expect([full.width, full.height]).toEqual([768, 576]);
    // A step not smaller than the source is the source's size: the full-size encoder, shared.
    const wide = live(await open({ width: 4000 }));
    expect([wide.width, wide.height]).toEqual([768, 576]);
    const running = await videos();
    expect(running.map((v) => `${v.width}x${v.height}@${v.fps} ${v.viewers}`).sort()).toEqual([
      '640x480@10 2',
      '768x576@10 2',
    ]);
    const segment = await eventually('a segment of the tile video', async () => {
      const newest = await newestSegment(tile);
      return newest.frames > 0 && newest;
    });
    expect(segment.size).toBe('640x480');
    expect(segment.frames).toBeLessThanOrEqual(11);
    for (const video of [tile, same, full, wide]) expect((await close(video.stream)).status).toBe(200);
    await eventually('every encoder stopped', async () => (await videos()).length === 0);
  }, 90_000);

  it('refuses a width that is not a positive integer, starting nothing', async () => {
    for (const width of [0, -640, 640.5, '640', 70_000]) {
      const answer = await open({ width });
      expect(answer.status, String(width)).toBe(400);
      expect(answer.body.code).toBe(40001);
    }
    expect(await videos()).toEqual([]);
  }, 30_000);

  it('answers every close and open of one video at once, round after round', async () => {
    const statuses: number[] = [];
    let previous = live(await open({ width: 480 }));
    for (let round = 0; round < 8; round++) {
      // The console's unfocus releases a tile's stream as its focus asks for the same one again.
      const [closed, next] = await Promise.all([close(previous.stream), open({ width: 480 })]);
      statuses.push(closed.status, next.status);
      if (next.status !== 200) break;
      previous = live(next);
    }
    expect(statuses).toEqual(Array(16).fill(200));
    expect((await close(previous.stream)).status).toBe(200);
  }, 120_000);
});
