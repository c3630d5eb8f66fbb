import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startsWithKeyframe } from '../engine/live/fmp4';
import { terminate } from './helpers/child';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { NginxRtmp } from './helpers/nginx-rtmp';
import { encodedFixture } from './helpers/rtmp-source';

/**
 * Raw previews (4.12) with real parts: a camera publishing H.264 to a real RTMP server, the fixture
 * file (MS-MPEG4) and an H.264 file whose keyframes are 25 s apart, each encoded to H.264 with a
 * keyframe every half second (so nothing waits for the source's keyframes), served as HLS and as
 * fragmented MP4 over a WebSocket by the engine. The engine's clock is moved by hand for the idle
 * release.
 */

const run = promisify(execFile);

interface Preview {
  stream_id: string;
  hls_url: string;
  width: number;
  height: number;
}

let t: TestEngine;
let nginx: NginxRtmp;
let camera: ChildProcess | undefined;

beforeAll(async () => {
  nginx = await NginxRtmp.start();
  camera = spawn(
    '/usr/bin/ffmpeg',
    [
      ...['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', encodedFixture(260)],
      ...['-c', 'copy', '-f', 'flv', nginx.url('cam')],
    ],
    { stdio: 'ignore' },
  );
  t = await startTestEngine();
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await terminate(camera, 'SIGKILL');
  await nginx?.dispose();
});

async function open(videoUrl: string): Promise<Preview> {
  const answer = await t.call('POST', '/api/stream', { json: { video_url: videoUrl, device_id: 'cam-1' } });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ code: 0 });
  return answer.body.data as Preview;
}

/** The preview's newest segment, probed: codec and size, and its frame count. */
async function newestSegment(preview: Preview): Promise<{ codec: string; frames: number }> {
  const listing = await fetch(`${preview.hls_url}?token=${t.token}`);
  expect(listing.status).toBe(200);
  const text = await listing.text();
  expect(text.startsWith('#EXTM3U\n')).toBe(true);
  const uri = text.trim().split('\n').at(-1) as string;
  expect(uri).toMatch(/^seg\d{5}\.ts\?token=/);
  const segment = await fetch(new URL(uri, preview.hls_url));
  expect(segment.status).toBe(200);
  const file = join(t.dataDir, `probe-${preview.stream_id}.ts`);
  writeFileSync(file, Buffer.from(await segment.arrayBuffer()));
  const { stdout } = await run('ffprobe', [
    ...['-v', 'error', '-select_streams', 'v', '-count_frames'],
    ...['-show_entries', 'stream=codec_name,width,height,nb_read_frames', '-of', 'csv=p=0', file],
  ]);
  const [codec = '', width, height, frames] = (stdout.trim().split('\n')[0] ?? '').split(',');
  expect([Number(width), Number(height)]).toEqual([preview.width, preview.height]);
  return { codec, frames: Number(frames) };
}

/** The command lines of the engine's preview ffmpeg processes (children of this process). */
async function previewProcesses(): Promise<string[]> {
  const { stdout } = await run('ps', ['-o', 'args=', '--ppid', String(process.pid)]);
  return stdout.split('\n').filter((line) => line.includes('ffmpeg') && line.includes(' -f tee '));
}

const folders = () => readdirSync(join(t.dataDir, 'live'));

const socketUrl = (path: string) =>
  `${t.engine.url.replace(/^http/, 'ws')}${path}?token=${encodeURIComponent(t.token)}`;

/** The first `count` messages of a WebSocket. */
function socketMessages(path: string, count: number): Promise<Buffer[]> {
  const socket = new WebSocket(socketUrl(path));
  const messages: Buffer[] = [];
  return new Promise<Buffer[]>((done, fail) => {
    socket.on('message', (data: Buffer) => {
      messages.push(data);
      if (messages.length === count) done(messages);
    });
    socket.on('error', fail);
    setTimeout(() => fail(new Error(`${messages.length} messages in 20 s`)), 20_000);
  }).finally(() => socket.close());
}

/** The close code of a WebSocket the engine closes. */
function socketClose(path: string): Promise<number> {
  const socket = new WebSocket(socketUrl(path));
  socket.on('error', () => {});
  return new Promise((done) => socket.on('close', (code) => done(code)));
}

describe('raw preview of a source (4.12)', () => {
  it('encodes an H.264 camera with short keyframe intervals, with its frame size', async () => {
    const preview = await open(nginx.url('cam'));
    expect(preview).toMatchObject({ width: 768, height: 576 });
    expect(preview.hls_url).toBe(`${t.engine.url}/api/stream/${preview.stream_id}/index.m3u8`);
    const segment = await newestSegment(preview);
    expect(segment.codec).toBe('h264');
    expect(segment.frames).toBeGreaterThan(0);
    const [line] = await previewProcesses();
    expect(line).toContain(' -c:v libx264 ');
    expect(line).toContain(' -force_key_frames expr:gte(t,n_forced*0.5) ');

    expect((await fetch(preview.hls_url)).status).toBe(401);
    expect((await t.call('DELETE', `/api/stream/${preview.stream_id}`)).body).toEqual({
      code: 0,
      msg: 'success',
      data: { stream_id: preview.stream_id },
    });
    expect(await previewProcesses()).toEqual([]);
    expect(folders()).toEqual([]);
    expect((await fetch(`${preview.hls_url}?token=${t.token}`)).status).toBe(404);
    expect((await t.call('DELETE', `/api/stream/${preview.stream_id}`)).body.code).toBe(40405);
  }, 60_000);

  it('encodes a source browsers cannot play to H.264, and releases a preview nobody fetches', async () => {
    const idle = await open(VIDEO);
    const watched = await open(VIDEO);
    expect(idle).toMatchObject({ width: 768, height: 576 });
    expect((await newestSegment(watched)).codec).toBe('h264');
    const lines = await previewProcesses();
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toContain(' -c:v libx264 ');

    // 50 s later one is fetched again; at 61 s only the other has been idle for a minute.
    t.advance(50_000);
    expect((await fetch(`${watched.hls_url}?token=${t.token}`)).status).toBe(200);
    t.advance(11_000);
    await eventually(
      'the idle preview released',
      async () => (await previewProcesses()).length === 1 && folders().length === 1,
      10_000,
      100,
    );
    expect((await fetch(`${idle.hls_url}?token=${t.token}`)).status).toBe(404);
    expect((await fetch(`${watched.hls_url}?token=${t.token}`)).status).toBe(200);
    expect(folders()).toEqual([`preview-${watched.stream_id}`]);
    t.advance(61_000);
    await eventually(
      'the other one released too',
      async () => (await previewProcesses()).length === 0 && folders().length === 0,
      10_000,
      100,
    );
  }, 60_000);

  it('plays a file whose keyframes are 25 s apart at once: a keyframe every half second on the socket', async () => {
    const sparse = join(t.dataDir, 'sparse-keyframes.mp4');
    await run('ffmpeg', [
      ...['-hide_banner', '-loglevel', 'error', '-y', '-i', VIDEO, '-t', '30', '-an'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '250', '-keyint_min', '250', '-sc_threshold', '0'],
      sparse,
    ]);
    const { stdout } = await run('ffprobe', [
      ...['-v', 'error', '-skip_frame', 'nokey', '-select_streams', 'v', '-show_entries', 'frame=pts_time'],
      ...['-of', 'csv=p=0', sparse],
    ]);
    expect(stdout.trim().split('\n').map(Number).filter(Number.isFinite)).toEqual([0, 25]);

    const preview = await open(sparse);
    expect(preview).toMatchObject({ width: 768, height: 576 });
    // The answer comes with the first encoded frame; the playlist, asked for at once, waits for its segment.
    expect((await fetch(`${preview.hls_url}?token=${t.token}`)).status).toBe(200);
    const messages = await socketMessages(`/api/stream/${preview.stream_id}/socket`, 22);
    const [init, ...fragments] = messages as [Buffer, ...Buffer[]];
    expect(init.toString('latin1', 4, 8)).toBe('ftyp');
    // At the source's 10 fps, a keyframe every half second is every fifth fragment, from the first.
    const keyframes = fragments.flatMap((fragment, i) => (startsWithKeyframe(fragment) ? [i] : []));
    expect(keyframes).toEqual([0, 5, 10, 15, 20]);
    await t.call('DELETE', `/api/stream/${preview.stream_id}`);
    const gone = await socketClose(`/api/stream/${preview.stream_id}/socket`);
    expect(gone).toBe(4404);
  }, 60_000);

  it('answers 503 for a source that cannot be opened, leaving nothing behind', async () => {
    const answer = await t.call('POST', '/api/stream', { json: { video_url: '/nonexistent/camera.mp4' } });
    expect(answer.status).toBe(503);
    expect(answer.body.code).toBe(50301);
    expect(answer.body.msg).toBe(
      "video_url: the source could not be previewed: no video file at this path in the engine's media folders",
    );
    expect(await previewProcesses()).toEqual([]);
    expect(folders()).toEqual([]);
  });
});
