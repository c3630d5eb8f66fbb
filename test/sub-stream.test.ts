import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskHealth } from '../engine/contract/health';
import { findFfmpeg } from '../engine/media/ffmpeg';
import type { TaskView } from '../engine/tasks/schema';
import { terminate } from './helpers/child';
import { startTestEngine, type TestEngine, taskView } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { NginxRtmp } from './helpers/nginx-rtmp';
import { Receiver } from './helpers/receiver';
import { RtmpSource } from './helpers/rtmp-source';
import { WALKER, walkerClip } from './helpers/walker-clip';

/**
 * A camera as two streams (issue 36): the same walker clip as a 1280x720 main stream and a 640x360
 * (and a 4:3 640x480) sub-stream, real ffmpeg, the built-in motion app. Boxes of events stay in the
 * main stream's pixels, the engine decodes the sub-stream only, clips are the main stream's; a
 * sub-stream that drops falls back to the main stream and comes back; a main stream that drops is
 * said in health while analysis goes on.
 */

const run = promisify(execFile);
const FFMPEG = findFfmpeg();
const MAIN = { width: 1280, height: 720 };
/** Where the walker's top and bottom edges lie in the main stream (the clip is scaled to it). */
const PERSON_TOP = (WALKER.top * MAIN.height) / WALKER.height;
const PERSON_BOTTOM = ((WALKER.top + WALKER.sprite.height) * MAIN.height) / WALKER.height;
/**
 * How far the median edge of a box on the sub-stream may lie from the same task's on the main
 * stream alone, main pixels: the motion detector works at 160 px wide, so one of its cells is 8 main
 * pixels; two cells.
 */
const EDGE_TOLERANCE = 16;

let t: TestEngine;
let receiver: Receiver;
let dir: string;
const files = { main: '', sub: '', sub43: '', subFlv: '', mainFlv: '' };

async function scaled(clip: string, size: string, name: string): Promise<string> {
  const out = join(dir, name);
  await run(FFMPEG, [
    ...['-v', 'error', '-y', '-i', clip, '-vf', `scale=${size}`, '-c:v', 'libx264', '-preset', 'veryfast'],
    ...['-g', String(WALKER.fps), '-pix_fmt', 'yuv420p', out],
  ]);
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-substream-'));
  // Left to right and back, 8 s a loop: motion all the time.
  const clip = await walkerClip(dir, `40+120*if(lt(mod(t,8),4),mod(t,8),8-mod(t,8))`, 8);
  [files.main, files.sub, files.sub43] = await Promise.all([
    scaled(clip, '1280:720', 'main.mp4'),
    scaled(clip, '640:360', 'sub.mp4'),
    scaled(clip, '640:480', 'sub43.mp4'),
  ]);
  files.subFlv = join(dir, 'sub.flv');
  files.mainFlv = join(dir, 'main.flv');
  await run(FFMPEG, ['-v', 'error', '-y', '-i', files.sub, '-c', 'copy', '-f', 'flv', files.subFlv]);
  await run(FFMPEG, ['-v', 'error', '-y', '-i', files.main, '-c', 'copy', '-f', 'flv', files.mainFlv]);
  receiver = await Receiver.start();
  t = await startTestEngine(undefined, undefined, { analysisFps: 5 });
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

const health = async (taskId: string): Promise<TaskHealth> => (await taskView(t, taskId)).health;

async function startTask(body: Record<string, unknown>): Promise<string> {
  const answer = await t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], report_url: receiver.url, ...body },
  });
  expect(answer.body.code, JSON.stringify(answer.body)).toBe(0);
  return (answer.body.data as { task_id: string }).task_id;
}

/** An event's object: x, y its centre. */
interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

const bottom = (boxes: Box[]) => median(boxes.map((b) => b.y + b.h / 2));

/** The boxes of the task's events so far. */
function boxesOf(taskId: string): Box[] {
  return receiver.accepted
    .filter((request) => request.task_id === taskId)
    .flatMap((request) => {
      const data = (request.body as { data?: { rules?: Array<{ objects?: Box[] }> } }).data;
      return (data?.rules ?? []).flatMap((rule) => rule.objects ?? []);
    });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

/** The engine's ffmpeg processes that read `file`, with their arguments. */
function ffmpegsReading(file: string): string[] {
  let lines: string[];
  try {
    lines = execFileSync('pgrep', ['-af', file], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    return [];
  }
  // setpriv starts each ffmpeg (owned-child.ts): one process line each, the ffmpeg's own.
  return lines.filter((line) => / -i /.test(line) && !line.includes('setpriv') && !line.includes('pgrep'));
}

describe('a camera as a main stream and a sub-stream', () => {
  it('analyses the sub-stream with boxes in the main stream pixels, decodes nothing of the main stream, records the main stream', async () => {
    const alone = await startTask({ video_url: files.main });
    const dual = await startTask({ video_url: files.main, analysis_url: files.sub });
    const view = await taskView(t, dual);
    expect(view.analysis_url).toBe(files.sub);
    expect(view.health.sub_stream).toMatchObject({
      state: 'running',
      width: 640,
      height: 360,
      aspect_mismatch: false,
      analysing: 'sub_stream',
    });
    // The task's stream is described in the main stream's size.
    expect(view.health.stream).toMatchObject({ width: MAIN.width, height: MAIN.height });

    // One decoding ffmpeg, of the sub-stream at its size; the main stream's is copy-only.
    const subReaders = ffmpegsReading(files.sub);
    expect(subReaders).toHaveLength(1);
    expect(subReaders[0]).toContain('image2pipe');
    const mainReaders = ffmpegsReading(files.main);
    // The task on the main stream alone decodes it; the dual task's reader only copies it.
    expect(mainReaders.filter((line) => line.includes('image2pipe'))).toHaveLength(1);
    const copies = mainReaders.filter((line) => !line.includes('image2pipe'));
    expect(copies).toHaveLength(1);
    // Every output it has copies packets: none decodes (a frame output, a filter, a null output's default encoder).
    const outputs = copies[0]?.match(/-map 0:v:0/g) ?? [];
    expect(outputs.length).toBeGreaterThan(0);
    expect(copies[0]?.match(/-map 0:v:0 -c:v copy/g)).toHaveLength(outputs.length);
    expect(copies[0]).not.toMatch(/rawvideo|ppm|wrapped_avframe|-vf |-filter/);

    // Events' boxes: in main pixels, the same as the task on the main stream alone.
    const [aloneBoxes, dualBoxes] = await eventually(
      'five events of each task',
      () => {
        const boxes: [Box[], Box[]] = [boxesOf(alone), boxesOf(dual)];
        return boxes.every((b) => b.length >= 5) && boxes;
      },
      90_000,
    );
    const top = (boxes: Box[]) => median(boxes.map((b) => b.y - b.h / 2));
    expect(Math.abs(top(dualBoxes) - top(aloneBoxes))).toBeLessThanOrEqual(EDGE_TOLERANCE);
    expect(Math.abs(bottom(dualBoxes) - bottom(aloneBoxes))).toBeLessThanOrEqual(EDGE_TOLERANCE);
    // And where the person is in the main stream: not in the sub-stream's half-size pixels.
    expect(Math.abs(top(dualBoxes) - PERSON_TOP)).toBeLessThanOrEqual(EDGE_TOLERANCE * 2);
    expect(Math.abs(bottom(dualBoxes) - PERSON_BOTTOM)).toBeLessThanOrEqual(EDGE_TOLERANCE * 2);

    // The clip buffer holds the main stream's own packets.
    const buffer = await eventually('a closed segment of the dual task', () => {
      const root = join(t.dataDir, 'clips');
      const found = execFileSync('find', [root, '-name', '*.ts', '-path', `*${dual}*`], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .filter(Boolean);
      return found.length > 1 && found;
    });
    const probed = execFileSync(
      'ffprobe',
      [
        '-v',
        'error',
        '-select_streams',
        'v:0',
        '-show_entries',
        'stream=width,height',
        '-of',
        'csv=p=0',
        buffer[0] as string,
      ],
      { encoding: 'utf8' },
    )
      .trim()
      .split('\n')[0];
    expect(probed).toBe(`${MAIN.width},${MAIN.height}`);

    await Promise.all([alone, dual].map((id) => t.call('DELETE', `/api/task/${id}`)));
  }, 180_000);

  it('judges a polygon drawn in main pixels as on the main stream alone', async () => {
    // The right part of the main picture: the walker's feet enter it only at the far end of its walk
    // (x up to about 1050 main pixels); in the sub-stream's own pixels (up to about 530) never.
    const region = {
      app_id: 'intrusion',
      polygon: [
        [800, 0],
        [1280, 0],
        [1280, 720],
        [800, 720],
      ],
    };
    const body = { app_ids: ['intrusion'], app_configs: [region] };
    const alone = await startTask({ ...body, video_url: files.main });
    const dual = await startTask({ ...body, video_url: files.main, analysis_url: files.sub });
    const [aloneBoxes, dualBoxes] = await eventually(
      'an intrusion of each task',
      () => {
        const boxes: [Box[], Box[]] = [boxesOf(alone), boxesOf(dual)];
        return boxes.every((b) => b.length >= 1) && boxes;
      },
      90_000,
    );
    // Feet inside the region, in main pixels, as on the main stream alone.
    for (const box of [...aloneBoxes, ...dualBoxes])
      expect(box.x).toBeGreaterThanOrEqual(800 - EDGE_TOLERANCE);
    await Promise.all([alone, dual].map((id) => t.call('DELETE', `/api/task/${id}`)));
  }, 180_000);

  it('says a sub-stream of another aspect, and maps it per axis', async () => {
    const id = await startTask({ video_url: files.main, analysis_url: files.sub43 });
    expect((await health(id)).sub_stream).toMatchObject({ width: 640, height: 480, aspect_mismatch: true });
    const boxes = await eventually('two events', () => boxesOf(id).length >= 2 && boxesOf(id), 60_000);
    expect(Math.abs(bottom(boxes) - PERSON_BOTTOM)).toBeLessThanOrEqual(EDGE_TOLERANCE * 2);
    await t.call('DELETE', `/api/task/${id}`);
  }, 120_000);

  it('falls back to the main stream while the sub-stream is down, and returns to it', async () => {
    const sub = await RtmpSource.serving('substream-drop', files.subFlv);
    sub.start();
    const id = await startTask({ video_url: files.main, analysis_url: sub.url, persistent: true });
    expect((await health(id)).sub_stream?.analysing).toBe('sub_stream');

    await sub.kill();
    const fallback = await eventually(
      'analysis on the main stream',
      async () => {
        const now = await health(id);
        return now.sub_stream?.analysing === 'main_stream' && now;
      },
      60_000,
    );
    expect(fallback.sub_stream).toMatchObject({ state: 'lost' });
    expect(fallback.sub_stream?.last_error).toBeTruthy();
    // Analysis goes on, on real frames of the main stream: the task is not lost.
    const before = fallback.frames_analysed;
    const events = boxesOf(id).length;
    await eventually(
      'frames analysed on the main stream',
      async () => (await health(id)).frames_analysed > before + 10,
    );
    // And events, in the main stream's pixels: the motion app's next one (it reports every 5 s at most).
    const during = await eventually(
      'an event on the main stream',
      () => boxesOf(id).length > events && boxesOf(id),
    );
    expect(Math.abs(bottom(during.slice(events)) - PERSON_BOTTOM)).toBeLessThanOrEqual(EDGE_TOLERANCE * 2);
    const running = await taskView(t, id);
    expect(running.status).toBe('running');
    expect(running.health.stream_lost_since).toBeNull();
    expect(running.health.stream?.width).toBe(MAIN.width);

    sub.start();
    const back = await eventually(
      'analysis back on the sub-stream',
      async () => {
        const now = await health(id);
        // The reconnect backoff runs on the engine's lifecycle clock, which the test moves.
        t.advance(3_000);
        return now.sub_stream?.analysing === 'sub_stream' && now.sub_stream.state === 'running' && now;
      },
      60_000,
    );
    expect(back.sub_stream?.width).toBe(640);
    // The decoding main ffmpeg is gone again: only the copy reads the main stream.
    await eventually('the main stream copied only', () =>
      ffmpegsReading(files.main).every((line) => !line.includes('image2pipe')),
    );
    await t.call('DELETE', `/api/task/${id}`);
    await sub.kill();
  }, 180_000);
});

describe('a main stream that drops beside a running sub-stream', () => {
  it('says so in health (a gap in its clips) while analysis goes on, and counts the drop once it is back', async () => {
    // A camera serving any number of clients: the main stream may be opened more than once.
    const server = await NginxRtmp.start();
    const url = server.url('main-drop');
    const publish = () =>
      spawn(
        FFMPEG,
        [
          ...['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', files.mainFlv],
          ...['-c', 'copy', '-f', 'flv', url],
        ],
        { stdio: 'ignore' },
      );
    let publisher = publish();
    try {
      const id = await eventually('the task started on the published main stream', async () => {
        const answer = await t.call('POST', '/api/task', {
          json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: url, analysis_url: files.sub },
        });
        return answer.body.code === 0 && (answer.body.data as { task_id: string }).task_id;
      });
      expect((await health(id)).sub_stream?.main).toEqual({ state: 'running', drops: 0, last_error: null });

      await terminate(publisher, 'SIGKILL');
      const lost = await eventually(
        'the main stream lost',
        async () => {
          const now = await health(id);
          return now.sub_stream?.main.state === 'lost' && now;
        },
        60_000,
      );
      expect(lost.sub_stream).toMatchObject({ analysing: 'sub_stream', state: 'running' });
      expect(lost.sub_stream?.main.drops).toBe(1);
      expect(lost.sub_stream?.main.last_error).toBeTruthy();
      expect((await taskView(t, id)).dump).toContain('main stream lost (');
      // Analysis goes on, on the sub-stream: the task is neither lost nor stalled.
      const before = lost.frames_analysed;
      await eventually(
        'frames analysed meanwhile',
        async () => (await health(id)).frames_analysed > before + 10,
      );
      expect((await taskView(t, id)).status).toBe('running');

      publisher = publish();
      const back = await eventually(
        'the main stream read again',
        async () => {
          // The recorder's reconnect backoff runs on the engine's lifecycle clock, which the test moves.
          t.advance(3_000);
          const now = await health(id);
          return now.sub_stream?.main.state === 'running' && now;
        },
        60_000,
      );
      expect(back.sub_stream?.main.drops).toBe(1);
      expect((await taskView(t, id)).dump).toContain('main stream dropped 1 time (last: ');
      await t.call('DELETE', `/api/task/${id}`);
    } finally {
      await terminate(publisher, 'SIGKILL');
      await server.dispose();
    }
  }, 180_000);
});

describe('the AI video of a task with a sub-stream', () => {
  it('shows the main stream, decoded only while it is watched', async () => {
    const id = await startTask({ video_url: files.main, analysis_url: files.sub });
    const opened = await t.call('POST', `/api/task/${id}/ailive`, { json: { app_ids: ['motion'] } });
    expect(opened.body.code, JSON.stringify(opened.body)).toBe(0);
    const video = opened.body.data as { stream: string; width: number; height: number };
    // The main stream's picture, not the sub-stream's 640x360.
    expect(video).toMatchObject({ width: MAIN.width, height: MAIN.height });
    expect((await health(id)).sub_stream?.analysing).toBe('main_stream');
    expect(ffmpegsReading(files.main).filter((line) => line.includes('image2pipe'))).toHaveLength(1);

    await t.call('DELETE', `/api/task/${id}/livestream/${video.stream}`);
    await eventually(
      'analysis back on the sub-stream, the main stream copied only',
      async () =>
        (await health(id)).sub_stream?.analysing === 'sub_stream' &&
        ffmpegsReading(files.main).every((line) => !line.includes('image2pipe')),
      60_000,
    );
    await t.call('DELETE', `/api/task/${id}`);
  }, 120_000);
});

describe('analysis_url is checked like video_url', () => {
  const count = async () => Number((await t.call('GET', '/api/tasks')).headers.get('x-total-count'));

  it('refuses a bad scheme, a file outside the media folders and an over-long URL, storing nothing', async () => {
    const before = await count();
    const scheme = await t.call('POST', '/api/task', {
      json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: files.main, analysis_url: 'ftp://cam/sub' },
    });
    expect(scheme.body).toMatchObject({
      code: 40001,
      msg: 'body.analysis_url: the scheme "ftp" is not supported',
    });

    const outside = await t.call('POST', '/api/task', {
      json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: files.main, analysis_url: '/etc/passwd' },
    });
    expect(outside.body).toMatchObject({ code: 50301, field: 'analysis_url', reason: 'file_refused' });
    expect(String(outside.body.msg)).toMatch(/^analysis_url: /);

    const long = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'builtin',
        app_ids: ['motion'],
        video_url: files.main,
        analysis_url: `rtsp://cam/${'a'.repeat(2048)}`,
      },
    });
    expect(long.body.code).toBe(40001);
    expect(String(long.body.msg)).toContain('analysis_url');

    const image = await t.call('POST', '/api/task', {
      json: { mode: 'image', zapk_id: 'builtin', app_ids: ['motion'], analysis_url: files.sub },
    });
    expect(image.body).toMatchObject({
      code: 40001,
      msg: 'body.analysis_url: is only for video tasks, not image tasks',
    });
    expect(await count()).toBe(before);
  });

  it('is listed, and survives a restart of the engine', async () => {
    const id = await startTask({ video_url: files.main, analysis_url: files.sub });
    const listed = (await t.call('GET', '/api/tasks')).body.data as TaskView[];
    expect(listed.find((task) => task.task_id === id)?.analysis_url).toBe(files.sub);
    await t.engine.close();
    t = await startTestEngine(t.dataDir, undefined, { analysisFps: 5 });
    const again = await eventually('the task running again on its sub-stream', async () => {
      const view = await taskView(t, id);
      return view.health.sub_stream?.state === 'running' && view;
    });
    expect(again.analysis_url).toBe(files.sub);
    await t.call('DELETE', `/api/task/${id}`);
  }, 120_000);
});
