import { execFile } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackBody } from '../engine/events/schema';
import { renderDump } from '../engine/tasks/health-view';
import type { TaskView } from '../engine/tasks/schema';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { installExamplePackage } from './helpers/example-package';
import { NginxRtmp } from './helpers/nginx-rtmp';
import { Receiver } from './helpers/receiver';
import { freePort } from './helpers/rtmp-source';

/**
 * The AI video with real parts: the engine (analysis capped at 5 fps) runs a person task on the
 * fixture video (10 fps); its annotated video is encoded by ffmpeg, served as HLS by the engine and
 * pushed to a real RTMP server (nginx with the rtmp module). The pixels of the video are checked
 * against the task's own callbacks. The engine shares this process's event loop: every child here
 * runs asynchronously.
 */

const run = promisify(execFile);
const FFMPEG = '/usr/bin/ffmpeg';
const WIDTH = 768;
const HEIGHT = 576;
const BORDER = 4;
/** #ff3b30, the person class colour of the example package. */
const isBoxRed = (r: number, g: number, b: number) => r > 150 && r - Math.max(g, b) > 90;

type Message = Extract<CallbackBody, { event: 'message' }>;
interface AiLive {
  stream: string;
  hls_url: string;
  rtmp: string;
}

let t: TestEngine;
let nginx: NginxRtmp;
let receiver: Receiver;
let taskId: string;

beforeAll(async () => {
  nginx = await NginxRtmp.start();
  receiver = await Receiver.start();
  t = await startTestEngine(undefined, undefined, { analysisFps: 5 });
  expect(await installExamplePackage(t)).toBe(200);
  const edited = await t.call('PUT', '/api/zapk/coco-yolox-nano/app/person', {
    json: { rule: { interval: 0 } },
  });
  expect(edited.body.code).toBe(0);
  const started = await t.call('POST', '/api/task', {
    json: {
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person'],
      video_url: VIDEO,
      report_url: receiver.url,
      osd: { border_size: BORDER },
    },
  });
  expect(started.body.code).toBe(0);
  taskId = (started.body.data as { task_id: string }).task_id;
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  await nginx?.dispose();
});

const messages = () =>
  receiver.accepted
    .map((r) => r.body as CallbackBody)
    .filter((b): b is Message => b.event === 'message' && b.task_id === taskId);

const view = async () => (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
const health = async () => (await view()).health;
const videoAt = async (kbps: number) =>
  (await health()).ai_video.find((video) => video.bitrate_kbps === kbps);

async function startLive(body: Record<string, unknown>): Promise<AiLive> {
  const answer = await t.call('POST', `/api/task/${taskId}/ailive`, { json: body });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ code: 0 });
  return answer.body.data as AiLive;
}

const withToken = (url: string) => `${url}?token=${encodeURIComponent(t.token)}`;

/** The playlist, checked line by line; resolves to its segment URLs (absolute). */
async function playlist(live: AiLive | { hls_url: string }): Promise<string[]> {
  const answer = await fetch(withToken(live.hls_url));
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^application\/vnd\.apple\.mpegurl/);
  const lines = (await answer.text()).trim().split('\n');
  expect(lines[0]).toBe('#EXTM3U');
  expect(lines).toContain('#EXT-X-TARGETDURATION:1');
  expect(lines.some((line) => /^#EXT-X-MEDIA-SEQUENCE:\d+$/.test(line))).toBe(true);
  const segments: string[] = [];
  lines.forEach((line, i) => {
    if (!line.startsWith('#EXTINF:')) return;
    expect(Number(/^#EXTINF:([\d.]+),/.exec(line)?.[1])).toBeCloseTo(1, 0);
    const uri = lines[i + 1] ?? '';
    expect(uri).toMatch(/^seg\d{5}\.ts\?token=/);
    segments.push(new URL(uri, live.hls_url).toString());
  });
  expect(segments.length).toBeGreaterThan(0);
  return segments;
}

/** Every frame of a segment, decoded to RGB. */
async function decodeSegment(url: string): Promise<Uint8Array[]> {
  const answer = await fetch(url);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toBe('video/mp2t');
  const file = join(t.dataDir, `check-${Date.now()}-${Math.random()}.ts`);
  writeFileSync(file, Buffer.from(await answer.arrayBuffer()));
  const probe = await run('ffprobe', [
    ...['-v', 'error', '-select_streams', 'v', '-show_entries', 'stream=codec_name,width,height'],
    ...['-of', 'csv=p=0', file],
  ]);
  // MPEG-TS lists the stream under its program too.
  expect(probe.stdout.trim().split('\n')[0]).toBe(`h264,${WIDTH},${HEIGHT}`);
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const size = WIDTH * HEIGHT * 3;
  expect(stdout.length % size).toBe(0);
  return Array.from({ length: stdout.length / size }, (_, i) => stdout.subarray(i * size, (i + 1) * size));
}

/** Share of the box's left, right and bottom border bands (labels sit on the top) in the box colour. */
function redBorder(frame: Uint8Array, o: { x: number; y: number; w: number; h: number }): number {
  const x1 = Math.round(o.x - o.w / 2);
  const y1 = Math.round(o.y - o.h / 2);
  const x2 = Math.min(WIDTH, Math.round(o.x + o.w / 2));
  const y2 = Math.min(HEIGHT, Math.round(o.y + o.h / 2));
  const half = Math.floor(BORDER / 2);
  const points: [number, number][] = [];
  for (let y = Math.round((y1 + y2) / 2); y < y2 - BORDER; y += 2)
    points.push([x1 + half, y], [x2 - half - 1, y]);
  for (let x = x1 + BORDER; x < x2 - BORDER; x += 2) points.push([x, y2 - half - 1]);
  if (points.length === 0) return 0;
  const red = points.filter(([x, y]) => {
    const at = (y * WIDTH + x) * 3;
    return isBoxRed(frame[at] as number, frame[at + 1] as number, frame[at + 2] as number);
  });
  return red.length / points.length;
}

/**
 * How far a drawn box may be from its callback's place: the video moves boxes on at their object's
 * velocity to the frame shown (engine/live/box-motion.ts), at most 1 s ahead; the fixture's walkers
 * cover well under this in the time between an analysis and the frames after it.
 */
const MAX_SHIFT = 24;
const SHIFT_STEP = 2;

/** The best red share of the object's box borders, moved by up to MAX_SHIFT px either way. */
function shiftedRedBorder(frame: Uint8Array, o: { x: number; y: number; w: number; h: number }): number {
  let best = 0;
  for (let dx = -MAX_SHIFT; dx <= MAX_SHIFT && best < 1; dx += SHIFT_STEP)
    for (let dy = -MAX_SHIFT; dy <= MAX_SHIFT && best < 1; dy += SHIFT_STEP)
      best = Math.max(best, redBorder(frame, { ...o, x: o.x + dx, y: o.y + dy }));
  return best;
}

/** For a frame, the best agreement with one recent callback: the least red share over its persons. */
function bestCallbackMatch(frame: Uint8Array, recent: Message[]): number {
  let best = 0;
  for (const message of recent) {
    const objects = message.data.rules.flatMap((rule) => rule.objects);
    if (objects.length === 0) continue;
    best = Math.max(best, Math.min(...objects.map((o) => shiftedRedBorder(frame, o))));
  }
  return best;
}

/** Frames of the newest segment, with the callbacks of the seconds before. */
async function grab(live: AiLive): Promise<{ frames: Uint8Array[]; recent: Message[] }> {
  const segments = await playlist(live);
  const frames = await decodeSegment(segments.at(-1) as string);
  const recent = messages().filter((m) => m.timestamp > Date.now() - 4_000);
  expect(recent.length).toBeGreaterThan(3);
  return { frames, recent };
}

/** ffprobe playing the push from the RTMP server: codec, size and the bitrate of a few seconds. */
async function probePush(url: string) {
  const { stdout } = await run(
    'ffprobe',
    [
      ...['-v', 'error', '-rw_timeout', '15000000', '-select_streams', 'v'],
      ...['-show_entries', 'stream=codec_name,width,height:packet=size,pts_time', '-of', 'json'],
      ...['-read_intervals', '%+6', url],
    ],
    { timeout: 60_000 },
  );
  const parsed = JSON.parse(stdout) as {
    streams: Array<{ codec_name: string; width: number; height: number }>;
    packets: Array<{ size: string; pts_time: string }>;
  };
  const times = parsed.packets.map((p) => Number(p.pts_time));
  const seconds = Math.max(...times) - Math.min(...times);
  const bytes = parsed.packets.reduce((sum, p) => sum + Number(p.size), 0);
  return { stream: parsed.streams[0], seconds, kbps: (bytes * 8) / seconds / 1000 };
}

/** The engine's encoder and push ffmpeg processes (children of this process, as the engine runs here). */
async function liveChildren(): Promise<string[]> {
  const { stdout } = await run('ps', ['-o', 'args=', '--ppid', String(process.pid)]);
  return stdout.split('\n').filter((line) => line.includes('ffmpeg') && / -f (tee|flv) /.test(line));
}

const aiFolders = () => readdirSync(join(t.dataDir, 'live')).filter((name) => name.startsWith('ai-'));

describe('AI video of a task (4.10, 4.11)', () => {
  it('serves the annotated video as HLS, pushes it to RTMP, and keeps the source rate with the analysis at its own', async () => {
    await receiver.waitFor('callbacks at the analysis rate', () => messages().length >= 10, 60_000);
    const beforeIds = messages().map((m) => m.data.frame.id);

    const live = await startLive({ app_ids: ['person'], bitrate: 600, rtmp: nginx.url('ai') });
    const switchedAt = Date.now();
    expect(live.rtmp).toBe(nginx.url('ai'));
    expect(live.hls_url).toBe(`${t.engine.url}/api/task/${taskId}/livestream/${live.stream}/index.m3u8`);

    // Every request is checked: no token, a wrong one, the header, ?token= on the segments.
    expect((await fetch(live.hls_url)).status).toBe(401);
    const wrong = await fetch(`${live.hls_url}?token=nope`);
    expect([wrong.status, ((await wrong.json()) as { code: number }).code]).toEqual([401, 40102]);
    const byHeader = await fetch(live.hls_url, { headers: { authorization: `Bearer ${t.token}` } });
    expect(byHeader.status).toBe(200);
    const bare = (await playlist(live))[0]?.split('?')[0] as string;
    expect((await fetch(bare)).status).toBe(401);
    const notServed = await fetch(withToken(live.hls_url.replace('index.m3u8', '..%2F..%2Fdb.sqlite')));
    expect(notServed.status).toBe(400);

    // Valid playlist; every listed segment decodes to H.264 frames of the source size.
    for (const segment of await playlist(live))
      expect((await decodeSegment(segment)).length).toBeGreaterThan(0);

    // Boxes where the callbacks say the persons are, moved on by at most MAX_SHIFT px.
    await eventually(
      'segments encoded after the first analyses',
      async () => (await playlist(live)).length >= 3,
    );
    const { frames, recent } = await grab(live);
    const matches = frames.map((frame) => bestCallbackMatch(frame, recent));
    expect(matches.filter((share) => share >= 0.75).length, `matches ${matches}`).toBeGreaterThanOrEqual(
      Math.ceil(frames.length * 0.8),
    );

    // The push: H.264 at the source size and about the requested bitrate, read back from nginx.
    const pushed = await probePush(nginx.url('ai'));
    expect(pushed.stream).toMatchObject({ codec_name: 'h264', width: WIDTH, height: HEIGHT });
    expect(pushed.seconds).toBeGreaterThan(4);
    expect(pushed.kbps).toBeGreaterThan(600 * 0.6);
    expect(pushed.kbps).toBeLessThan(600 * 1.4);
    const shown = await view();
    expect(shown.health.ai_video).toEqual([
      {
        app_ids: ['person'],
        width: 768,
        height: 576,
        fps: 10,
        bitrate_kbps: 600,
        viewers: 1,
        encoder: { state: 'live', last_error: null, retry_in_s: null },
        frames_written: expect.any(Number),
        // A loaded machine may make the encoder drop a frame or two.
        frames_dropped: expect.any(Number),
        osd_error: null,
        pushes: [
          {
            url: expect.stringMatching(/^rtmp:\/\/127\.0\.0\.1:\d+\/live\/…$/),
            ffmpeg: { state: 'live', last_error: null, retry_in_s: null },
          },
        ],
      },
    ]);
    // The dump line is rendered from the same figures.
    expect(shown.dump).toBe(renderDump(shown.health));

    // While the video runs the source passes all 10 fps, and the analysis takes every other frame:
    // frame ids of the callbacks step by 2 (by 1 before, when ffmpeg passed only 5 fps).
    await receiver.waitFor(
      'callbacks after the switch',
      () => messages().filter((m) => m.timestamp > switchedAt + 1_000).length >= 10,
      30_000,
    );
    const afterIds = messages()
      .filter((m) => m.timestamp > switchedAt + 1_000)
      .map((m) => m.data.frame.id);
    const gaps = (ids: number[]) => ids.slice(1).map((id, i) => id - (ids[i] as number));
    expect(gaps(afterIds).every((gap) => gap % 2 === 0)).toBe(true);
    expect(gaps(beforeIds).filter((gap) => gap === 1).length).toBeGreaterThan(gaps(beforeIds).length / 2);
    expect(receiver.accepted.map((r) => r.body?.event)).not.toContain('stream_lost');

    // osd changes apply live: without boxes (and labels), no box colour where the persons are.
    const hidden = await t.call('PUT', `/api/task/${taskId}`, {
      json: { osd: { display_box: false, display_name: false, display_track: false } },
    });
    expect(hidden.body.code).toBe(0);
    const changedAt = Date.now();
    await eventually('a segment encoded after the change', async () => {
      const answer = await fetch(withToken(live.hls_url));
      const text = await answer.text();
      return Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)?.[1]) > 0 && Date.now() > changedAt + 2_500;
    });
    const after = await grab(live);
    const left = after.frames.map((frame) => bestCallbackMatch(frame, after.recent));
    expect(Math.max(...left), `matches ${left}`).toBeLessThan(0.2);
    await t.call('PUT', `/api/task/${taskId}`, {
      json: { osd: { display_box: true, display_name: true, display_track: true } },
    });

    // The RTMP server goes away: the push retries with backoff, the task and its HLS carry on.
    await nginx.stop();
    const countAtLoss = messages().length;
    await eventually(
      'the push retrying',
      async () => (await videoAt(600))?.pushes[0]?.ffmpeg.state === 'retrying',
    );
    expect((await health()).stream?.state).toBe('running');
    await receiver.waitFor('analysis going on without the server', () => messages().length > countAtLoss + 5);
    expect((await playlist(live)).length).toBeGreaterThan(0);
    await nginx.restart();
    await eventually(
      'the push live again',
      async () => (await videoAt(600))?.pushes[0]?.ffmpeg.state === 'live',
      60_000,
    );
    expect((await probePush(nginx.url('ai'))).stream).toMatchObject({ codec_name: 'h264', width: WIDTH });

    expect((await t.call('DELETE', `/api/task/${taskId}/livestream/${live.stream}`)).body).toMatchObject({
      code: 0,
      data: { task_id: taskId, stream: live.stream },
    });
    await eventually('the encoder and push gone', async () => (await liveChildren()).length === 0);
    expect(aiFolders()).toEqual([]);
    expect((await fetch(withToken(live.hls_url))).status).toBe(404);
    expect((await t.call('DELETE', `/api/task/${taskId}/livestream/${live.stream}`)).body.code).toBe(40405);
  }, 300_000);

  it('shares one encoder among viewers of the same video, and closing the task stops every stream', async () => {
    const first = await startLive({ app_ids: ['person'] });
    const second = await startLive({ app_ids: ['person'] });
    expect(second.stream).not.toBe(first.stream);
    expect(aiFolders()).toHaveLength(1);
    expect((await liveChildren()).length).toBe(1);
    expect(await videoAt(2000)).toMatchObject({
      app_ids: ['person'],
      width: 768,
      height: 576,
      fps: 10,
      viewers: 2,
    });

    // Another bitrate is another encoder; a viewer's release leaves the other viewers playing.
    const other = await startLive({ app_ids: ['person'], bitrate: 400 });
    expect(aiFolders()).toHaveLength(2);
    expect((await t.call('DELETE', `/api/task/${taskId}/livestream/${first.stream}`)).body.code).toBe(0);
    expect((await playlist(second)).length).toBeGreaterThan(0);
    expect((await videoAt(2000))?.viewers).toBe(1);

    // An unreachable push target: the video and the analysis are not affected.
    const port = await freePort();
    const unreachable = await startLive({
      app_ids: ['person'],
      bitrate: 400,
      rtmp: `rtmp://127.0.0.1:${port}/live/x`,
    });
    expect(aiFolders()).toHaveLength(2);
    await eventually('the push failing', async () =>
      (await health()).ai_video.some((video) =>
        video.pushes.some(
          ({ url, ffmpeg }) =>
            url === `rtmp://127.0.0.1:${port}/live/…` &&
            ffmpeg.state === 'retrying' &&
            /refused|Input\/output/i.test(ffmpeg.last_error ?? ''),
        ),
      ),
    );
    expect((await playlist(unreachable)).length).toBeGreaterThan(0);
    expect((await health()).stream?.state).toBe('running');

    expect((await t.call('DELETE', `/api/task/${taskId}`)).body.code).toBe(0);
    await eventually(
      'every encoder and push gone, with their folders',
      async () => (await liveChildren()).length === 0 && aiFolders().length === 0,
    );
    for (const live of [second, other, unreachable])
      expect((await fetch(withToken(live.hls_url))).status).toBe(404);
    expect(
      (await t.call('POST', `/api/task/${taskId}/ailive`, { json: { app_ids: ['person'] } })).body.code,
    ).toBe(40902);
  }, 120_000);

  it('stops every stream and removes its folder when the engine shuts down', async () => {
    const started = await t.call('POST', '/api/task', {
      json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: VIDEO },
    });
    taskId = (started.body.data as { task_id: string }).task_id;
    await startLive({ app_ids: ['person'], rtmp: nginx.url('shutdown') });
    const preview = await t.call('POST', '/api/stream', { json: { video_url: VIDEO } });
    expect(preview.body.code).toBe(0);
    expect(readdirSync(join(t.dataDir, 'live'))).toHaveLength(2);
    await t.engine.close();
    expect(await liveChildren()).toEqual([]);
    expect(readdirSync(join(t.dataDir, 'live'))).toEqual([]);
  }, 60_000);
});
