import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameSource, type RtspTransport } from '../engine/media/frame-source';
import { parseSourceUrl, type SourceUrl } from '../engine/media/source-url';
import { StreamWatchdog, type WatchdogFrame } from '../engine/media/stream-watchdog';
import { isAlive } from './helpers/child';
import { eventually } from './helpers/eventually';
import { accepts } from './helpers/local-server';
import { encodedFixture, freePort } from './helpers/rtmp-source';
import { described } from './helpers/rtsp-camera';

/**
 * The source kinds besides RTMP (covered by the pipeline tests), each from a real server: HTTP
 * recordings (FLV, MP4) and HLS from a plain HTTP server, and RTSP from Debian's rtsp-server-perl,
 * which serves RTP over UDP only, so the engine's TCP-first RTSP has to fall back to UDP.
 */

const FFMPEG = '/usr/bin/ffmpeg';
const tmp = mkdtempSync(join(tmpdir(), 'vc-video-sources-'));
const flv = encodedFixture(260);

let http: Server;
let httpBase = '';

beforeAll(async () => {
  const ff = (...args: string[]) =>
    execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
  ff('-i', flv, '-c', 'copy', '-movflags', '+faststart', join(tmp, 'clip.mp4'));
  ff(
    ...['-i', flv, '-c', 'copy', '-f', 'hls', '-hls_time', '2', '-hls_list_size', '0'],
    ...['-hls_playlist_type', 'vod', join(tmp, 'clip.m3u8')],
  );
  // A static file server that, like real ones, answers byte ranges (ffmpeg asks for them on MP4).
  http = createServer((request, response) => {
    const file = join(tmp, normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)));
    const name = file === join(tmp, 'clip.flv') ? flv : file;
    let size: number;
    try {
      size = statSync(name).size;
    } catch {
      response.writeHead(404).end();
      return;
    }
    const range = /bytes=(\d+)-(\d*)/.exec(request.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const end = range?.[2] ? Number(range[2]) : size - 1;
    response.writeHead(range ? 206 : 200, {
      'content-length': end - start + 1,
      'accept-ranges': 'bytes',
      ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
    });
    createReadStream(name, { start, end }).pipe(response);
  });
  await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
  httpBase = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((done) => http.close(done));
  rmSync(tmp, { recursive: true, force: true });
});

function sourceOf(url: string): SourceUrl {
  const parsed = parseSourceUrl(url);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

/** A watchdog on the source, recording the RTSP transport of every ffmpeg it starts. */
function watch(url: string) {
  const transports: RtspTransport[] = [];
  const sources: FrameSource[] = [];
  const watchdog = new StreamWatchdog(sourceOf(url), {
    createSource: (source, transport) => {
      transports.push(transport);
      const created = new FrameSource(source, { ffmpeg: FFMPEG, transport, ioTimeoutMs: 5_000 });
      sources.push(created);
      return created;
    },
  });
  const frames: WatchdogFrame[] = [];
  watchdog.on('frame', (frame) => {
    if (frames.length < 30) frames.push(frame);
  });
  return { watchdog, frames, transports, sources };
}

/** Starts the source, waits for a few decoded frames, closes it, and checks no ffmpeg is left. */
async function framesOf(url: string) {
  const watched = watch(url);
  try {
    const info = await watched.watchdog.start(15_000);
    for (let waited = 0; watched.frames.length < 5 && waited < 5_000; waited += 100) await sleep(100);
    return { info, ...watched };
  } finally {
    await watched.watchdog.close();
    expect(watched.sources.every((source) => !isAlive(source.pid))).toBe(true);
  }
}

/** The mean of the frame's pixels: the fixture's street scene is neither black nor blank. */
const meanLevel = (frame: WatchdogFrame) => frame.data.reduce((sum, v) => sum + v, 0) / frame.data.length;

describe('HTTP sources', () => {
  for (const [kind, path] of [
    ['an FLV recording', '/clip.flv'],
    ['a progressive MP4', '/clip.mp4'],
    ['an HLS playlist', '/clip.m3u8'],
  ] as const) {
    it(`decodes ${kind} over HTTP at the fixture's size, as live`, async () => {
      const { info, frames } = await framesOf(`${httpBase}${path}`);
      expect(info).toMatchObject({ width: 768, height: 576 });
      expect(frames.length).toBeGreaterThanOrEqual(5);
      for (const frame of frames) {
        expect(frame.synthetic).toBe(false);
        expect(frame.data.length).toBe(768 * 576 * 3);
        expect(meanLevel(frame)).toBeGreaterThan(40);
      }
      // Played at its own rate (-re), not decoded as fast as the CPU allows: ~10 fps.
      const first = frames[0]?.receivedAt ?? 0;
      const fifth = frames[4]?.receivedAt ?? 0;
      expect(fifth - first).toBeGreaterThan(250);
    }, 30_000);
  }

  it('rejects a missing recording with the server’s answer, leaving no ffmpeg', async () => {
    const { watchdog, sources } = watch(`${httpBase}/missing.flv`);
    await expect(watchdog.start(3_000)).rejects.toThrow(/404|Not Found/i);
    expect(sources.every((source) => !isAlive(source.pid))).toBe(true);
  }, 15_000);
});

describe('RTSP source', () => {
  let server: ChildProcess;
  let publisher: ChildProcess;
  let clientPort = 0;

  beforeAll(async () => {
    clientPort = await freePort();
    const sourcePort = await freePort();
    server = spawn(
      'rtsp-server-perl',
      [
        ...['--clientport', String(clientPort), '--serverport', String(sourcePort)],
        ...['--rtp_start_port', String(20_000 + (clientPort % 20_000)), '--loglevel', '1'],
      ],
      { stdio: 'ignore' },
    );
    // A publisher that connects before the server listens gives up, and the camera is never there.
    await eventually('rtsp-server-perl to listen', () => accepts(sourcePort), 10_000, 50);
    publisher = spawn(
      FFMPEG,
      [
        ...['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', flv],
        ...['-c', 'copy', '-f', 'rtsp', `rtsp://127.0.0.1:${sourcePort}/camera`],
      ],
      { stdio: 'ignore' },
    );
    await eventually(
      'the camera to be published',
      () => described(`rtsp://127.0.0.1:${clientPort}/camera`),
      15_000,
    );
  });

  afterAll(() => {
    publisher?.kill('SIGKILL');
    server?.kill('SIGKILL');
  });

  it('falls back from TCP to UDP for a server that only sends RTP over UDP', async () => {
    const { info, frames, transports } = await framesOf(`rtsp://127.0.0.1:${clientPort}/camera`);
    expect(info).toMatchObject({ width: 768, height: 576 });
    expect(transports[0]).toBe('tcp');
    expect(transports).toContain('udp');
    expect(frames.length).toBeGreaterThanOrEqual(5);
    expect(frames.every((frame) => !frame.synthetic && meanLevel(frame) > 40)).toBe(true);
  }, 30_000);
});
