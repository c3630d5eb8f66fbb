import { spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIP_BUFFER_LIMITS, ClipBuffers } from '../engine/clips/clip-buffers';
import { type CutClip, cutClip } from '../engine/clips/cut-clip';
import { FrameSource } from '../engine/media/frame-source';
import { parseSourceUrl } from '../engine/media/source-url';
import { StreamWatchdog } from '../engine/media/stream-watchdog';
import { launchChromium } from './helpers/browser';
import { terminate } from './helpers/child';
import { fastStart, pictureHashes, probeClip } from './helpers/clip-probe';
import { eventually } from './helpers/eventually';
import { NginxRtmp } from './helpers/nginx-rtmp';
import { frameNumber, frameNumbersOf, NUMBERED, numberedVideo } from './helpers/numbered-video';
import { startRtspCamera } from './helpers/rtsp-camera';

/**
 * Clips of each source kind (issue 35): a file, an RTMP camera (nginx-rtmp) and an RTSP camera
 * (rtsp-server-perl, RTP over UDP), each read by a real ffmpeg FrameSource whose ClipBuffers ring
 * keeps the stream, as the engine wires them. The source is H.264 High 640x360 at 25 fps with a
 * keyframe every 2 s (GOP 50 frames), each picture carrying its own number (numbered-video.ts): the
 * engine's frames say when it saw each number, the clip's pictures say which numbers it holds.
 */

const FFMPEG = process.env.FFMPEG_BIN ?? '/usr/bin/ffmpeg';
const GOP_S = 2;
const PRE_S = 3;
const POST_S = 3;
/** How late the engine may see a frame, or the ring a closed segment, on a loaded machine. */
const SLACK_MS = 1_000;
const SOURCE = numberedVideo(60, GOP_S * NUMBERED.fps);
const tmp = mkdtempSync(join(tmpdir(), 'vc-clip-sources-'));

interface Recorded {
  clip: CutClip;
  /** The wall time the alarm is for. */
  t: number;
  /** Frame number -> Date.now() when the engine's ffmpeg gave the frame. */
  seen: Map<number, number>;
  clips: string;
}

/**
 * Reads `url` as the engine does (a StreamWatchdog whose ffmpeg keeps the stream in ClipBuffers)
 * until the span around an alarm time t (PRE_S after the first frame and then some) has gone by
 * and closed, then cuts [t - PRE_S, t + POST_S].
 */
async function recordAlarm(name: string, url: string): Promise<Recorded> {
  const taskId = `task-${name}`;
  const buffers = new ClipBuffers(join(tmp, `buffer-${name}`), { ...CLIP_BUFFER_LIMITS, pollMs: 100 });
  const parsed = parseSourceUrl(url);
  if ('error' in parsed) throw new Error(parsed.error);
  let latest: FrameSource | undefined;
  const stream = new StreamWatchdog(parsed, {
    createSource: (source, transport, mode) => {
      latest = new FrameSource(source, {
        ffmpeg: FFMPEG,
        transport,
        seekS: mode.seekS,
        record: buffers.target(taskId),
      });
      buffers.follow(taskId, latest.run, latest);
      return latest;
    },
  });
  const seen = new Map<number, number>();
  stream.on('frame', (frame) => {
    const n = frameNumber(frame);
    if (!frame.synthetic && !seen.has(n)) seen.set(n, Date.now());
    frame.release?.();
  });
  try {
    await stream.start(30_000);
    const first = Date.now();
    // Past the burst a network reader first gets of what its server buffered.
    const t = first + (PRE_S + 2) * 1000;
    const from = t - PRE_S * 1000;
    const to = t + POST_S * 1000;
    const segments = await eventually(
      'the segments around t to close',
      () => {
        const found = buffers.segments(taskId, from, to);
        return (found.at(-1)?.endAt ?? 0) >= to && found;
      },
      (PRE_S + POST_S + 4 * GOP_S) * 1000 + 30_000,
      100,
    );
    const clip = await cutClip(FFMPEG, segments, join(tmp, `${name}.mp4`));
    return { clip, t, seen, clips: buffers.state(taskId).clips };
  } catch (error) {
    const placed = buffers
      .segments(taskId, 0, Number.POSITIVE_INFINITY)
      .map(({ run, startAt, endAt }) => `${run}: ${startAt}-${endAt}`);
    throw new Error(
      `${(error as Error).message}; clips ${JSON.stringify(buffers.state(taskId))}, ${stream.reconnects} reconnects, segments ${placed.join(', ')}; ffmpeg said: ${latest?.stderrTail.slice(-1000)}`,
    );
  } finally {
    await stream.close();
    buffers.close();
  }
}

/** When the engine saw frame n: seen directly, or placed from the nearest frame it saw (ffmpeg may drop one). */
function seenAt(seen: Map<number, number>, n: number): number {
  for (let d = 0; d < NUMBERED.fps; d++) {
    const before = seen.get(n - d);
    if (before !== undefined) return before + (d * 1000) / NUMBERED.fps;
    const after = seen.get(n + d);
    if (after !== undefined) return after - (d * 1000) / NUMBERED.fps;
  }
  throw new Error(`the engine saw no frame near ${n}`);
}

const sourceHashes = pictureHashes(SOURCE);
const recorded = new Map<string, Recorded>();

/** What every source kind's clip must be. */
function expectClipOfAlarm(name: string, { clip, t, seen, clips }: Recorded): void {
  expect(clips).toBe('recording');
  // Codec untouched: same codec, profile, size and pixels as the source, as ffprobe reads the MP4.
  const { stream, duration, format } = probeClip(clip.file);
  expect(format).toContain('mp4');
  expect(stream).toEqual(probeClip(SOURCE).stream);
  expect(stream).toMatchObject({ codec_name: 'h264', profile: 'High', width: 640, height: 360 });
  // Its pictures are a gapless run of the source's numbers, and exactly the source's pictures there.
  const numbers = frameNumbersOf(clip.file);
  const [first, last] = [numbers[0] ?? -1, numbers.at(-1) ?? -1];
  expect(numbers, name).toEqual(numbers.map((_, i) => first + i));
  expect(pictureHashes(clip.file)).toEqual(sourceHashes.slice(first, last + 1));
  // Whole GOPs: it starts on a keyframe of the source.
  expect(first % (GOP_S * NUMBERED.fps)).toBe(0);
  expect(Math.abs(duration - numbers.length / NUMBERED.fps)).toBeLessThan(0.1);
  // It covers [t - pre, t + post] on the engine's clock, overshooting by one keyframe interval at most.
  const [from, to] = [t - PRE_S * 1000, t + POST_S * 1000];
  const [start, end] = [seenAt(seen, first), seenAt(seen, last) + 1000 / NUMBERED.fps];
  expect(start, `${name}: first frame seen ${from - start} ms before t - pre`).toBeLessThanOrEqual(
    from + SLACK_MS,
  );
  expect(start).toBeGreaterThanOrEqual(from - GOP_S * 1000 - SLACK_MS);
  expect(end, `${name}: last frame seen ${end - to} ms after t + post`).toBeGreaterThanOrEqual(to - SLACK_MS);
  expect(end).toBeLessThanOrEqual(to + GOP_S * 1000 + SLACK_MS);
  // And by no whole GOP more than it needs: the next keyframe after its first frame comes after
  // t - pre, and its last GOP begins before t + post.
  const gop = GOP_S * NUMBERED.fps;
  expect(seenAt(seen, first + gop)).toBeGreaterThan(from - SLACK_MS);
  expect(seenAt(seen, first + Math.floor((last - first) / gop) * gop)).toBeLessThan(to + SLACK_MS);
  // Where the buffer placed it is where the engine saw it.
  expect(Math.abs(clip.startAt - start)).toBeLessThan(SLACK_MS);
  expect(Math.abs(clip.endAt - end)).toBeLessThan(SLACK_MS);
  expect(fastStart(clip.file)).toBe(true);
}

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a clip for an alarm at t, per source kind (GOP 2 s, pre 3 s, post 3 s)', () => {
  let rtmp: NginxRtmp;

  beforeAll(async () => {
    rtmp = await NginxRtmp.start();
  });
  afterAll(() => rtmp?.dispose());

  it('file', async () => {
    const file = await recordAlarm('file', SOURCE);
    recorded.set('file', file);
    expectClipOfAlarm('file', file);
  }, 90_000);

  it('RTMP (nginx-rtmp, copied from a publisher)', async () => {
    const publisher = spawn(
      FFMPEG,
      [
        ...['-hide_banner', '-loglevel', 'error', '-re', '-i', SOURCE],
        ...['-c', 'copy', '-f', 'flv', rtmp.url('camera')],
      ],
      { stdio: 'ignore' },
    );
    try {
      // nginx serves a name once its publisher is on: until then the reader is refused.
      await sleep(1_000);
      const camera = await recordAlarm('rtmp', rtmp.url('camera'));
      recorded.set('rtmp', camera);
      expectClipOfAlarm('rtmp', camera);
    } finally {
      await terminate(publisher, 'SIGKILL');
    }
  }, 90_000);

  it('RTSP (rtsp-server-perl, RTP over UDP)', async () => {
    const rtsp = await startRtspCamera(SOURCE);
    try {
      const camera = await recordAlarm('rtsp', rtsp.url);
      recorded.set('rtsp', camera);
      expectClipOfAlarm('rtsp', camera);
    } finally {
      await rtsp.stop();
    }
  }, 90_000);
});

describe('Chromium plays the clips', () => {
  let browser: Browser;
  let http: Server;
  let base = '';

  beforeAll(async () => {
    browser = await launchChromium();
    // The clips over HTTP with byte ranges, as a player asks for them (the engine's clip route is
    // another part of issue 35).
    http = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      if (path === '/') {
        response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>clips</title>');
        return;
      }
      const file = join(tmp, basename(path));
      if (!file.endsWith('.mp4')) {
        response.writeHead(404).end();
        return;
      }
      const size = statSync(file).size;
      const range = /bytes=(\d+)-(\d*)/.exec(request.headers.range ?? '');
      const start = range ? Number(range[1]) : 0;
      const end = range?.[2] ? Number(range[2]) : size - 1;
      response.writeHead(range ? 206 : 200, {
        'content-type': 'video/mp4',
        'content-length': end - start + 1,
        'accept-ranges': 'bytes',
        ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
      });
      createReadStream(file, { start, end }).pipe(response);
    });
    await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    http?.close();
  });

  for (const kind of ['file', 'rtmp', 'rtsp']) {
    it(`plays the ${kind} clip to its end at the source's size`, async () => {
      expect(recorded.has(kind), `the ${kind} clip was cut`).toBe(true);
      const page = await browser.newPage();
      try {
        await page.goto(`${base}/`);
        const played = await page.evaluate(async (src) => {
          const video = document.createElement('video');
          video.muted = true;
          video.src = src;
          document.body.append(video);
          await new Promise((done, fail) => {
            video.onloadedmetadata = done;
            video.onerror = () => fail(new Error(`error ${video.error?.code}: ${video.error?.message}`));
          });
          video.playbackRate = 4;
          await video.play();
          await new Promise((done) => {
            video.onended = done;
          });
          return {
            width: video.videoWidth,
            height: video.videoHeight,
            at: video.currentTime,
            duration: video.duration,
          };
        }, `${base}/${kind}.mp4`);
        expect(played).toMatchObject({ width: 640, height: 360 });
        expect(played.duration).toBeGreaterThan(PRE_S + POST_S - 1);
        expect(played.at).toBeGreaterThan(played.duration - 1);
      } finally {
        await page.close();
      }
    }, 60_000);
  }
});
