// Over 400 lines on purpose: every source kind and every way a reader fails, against real servers, in one place.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { type EventEmitter, once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock';
import {
  boundedSize,
  boundingScaleFilter,
  MAX_FRAME_SIDE,
  sourceSizeOf,
} from '../engine/media/analysis-size';
import { FramePool } from '../engine/media/frame-pool';
import { type PooledFrame, PpmFrameReader } from '../engine/media/frame-reader';
import {
  FrameSource,
  type SourceFrame,
  type SourceInfo,
  videoStreamFps,
  videoStreamSize,
} from '../engine/media/frame-source';
import type { SourceUrl } from '../engine/media/source-url';
import { StreamWatchdog, type WatchdogFrame, type WatchdogState } from '../engine/media/stream-watchdog';
import { isAlive } from './helpers/child';
import { FIXTURES } from './helpers/fixtures';
import { freePort } from './helpers/rtmp-source';

const FFMPEG = '/usr/bin/ffmpeg';
const VIDEO = join(FIXTURES, 'media', 'vtest.avi');
const VIDEO_INFO: SourceInfo = { width: 768, height: 576, fps: 10, source: { width: 768, height: 576 } };
const tmp = mkdtempSync(join(tmpdir(), 'vc-frame-source-'));

/** Everything a test started, so afterEach can make sure none of it outlives the test. */
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** ffmpeg's output for a generated test pattern, in the given format. */
function testPattern(size: string, frames: number, format: 'ppm' | 'rawvideo'): Buffer {
  const output = format === 'ppm' ? ['-f', 'image2pipe', '-c:v', 'ppm'] : ['-f', 'rawvideo'];
  return execFileSync(FFMPEG, [
    ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=${size}:rate=5`],
    ...['-frames:v', String(frames), '-pix_fmt', 'rgb24', ...output, '-'],
  ]);
}

describe('PpmFrameReader', () => {
  // Two frames at 64x48, then two at 32x24: a resolution change as after a reconnect.
  const stream = Buffer.concat([testPattern('64x48', 2, 'ppm'), testPattern('32x24', 2, 'ppm')]);
  const big = testPattern('64x48', 2, 'rawvideo');
  const small = testPattern('32x24', 2, 'rawvideo');
  const expected = [
    { width: 64, height: 48, data: big.subarray(0, 64 * 48 * 3) },
    { width: 64, height: 48, data: big.subarray(64 * 48 * 3) },
    { width: 32, height: 24, data: small.subarray(0, 32 * 24 * 3) },
    { width: 32, height: 24, data: small.subarray(32 * 24 * 3) },
  ];
  // Where each 13-byte header ("P6\n64 48\n255\n") starts.
  const bigFrame = 64 * 48 * 3 + 13;
  const headerAt = [0, bigFrame, 2 * bigFrame, 2 * bigFrame + 32 * 24 * 3 + 13] as const;

  const decode = (chunks: Buffer[]) => {
    const reader = new PpmFrameReader();
    return chunks.flatMap((chunk) => reader.push(chunk));
  };
  // Size and pixel digest: comparing thousands of pixel arrays element by element is slow.
  const asComparable = (frames: { width: number; height: number; data: Uint8Array }[]) =>
    frames.map(
      ({ width, height, data }) => `${width}x${height} ${createHash('sha1').update(data).digest('hex')}`,
    );

  it('finds the four frames in the real ffmpeg stream, with their sizes and pixels', () => {
    expect(stream.subarray(headerAt[2], headerAt[2] + 13).toString()).toBe('P6\n32 24\n255\n');
    expect(asComparable(decode([stream]))).toEqual(asComparable(expected));
  });

  it('decodes the same frames however the stream is split around each header', () => {
    for (const start of headerAt) {
      for (let cut = Math.max(0, start - 2); cut <= start + 15; cut++) {
        const frames = decode([stream.subarray(0, cut), stream.subarray(cut)]);
        expect(asComparable(frames), `split at byte ${cut}`).toEqual(asComparable(expected));
      }
    }
    const byteByByte = [...stream.subarray(0, headerAt[2] + 40)].map((byte) => Buffer.of(byte));
    const frames = decode([...byteByByte, stream.subarray(headerAt[2] + 40)]);
    expect(asComparable(frames)).toEqual(asComparable(expected));
  });

  it('gives every unreleased frame its own exactly sized buffer', () => {
    const frames = decode([stream]);
    for (const frame of frames) {
      expect(frame.data.byteOffset).toBe(0);
      expect(frame.data.buffer.byteLength).toBe(frame.width * frame.height * 3);
    }
    expect(new Set(frames.map((frame) => frame.data.buffer)).size).toBe(4);
  });

  it('reads in place: reads of any length into target() give the same frames as push()', () => {
    for (const maxRead of [1, 7, 13, 64, 1000, 1 << 16]) {
      const reader = new PpmFrameReader();
      const frames = [];
      for (let at = 0; at < stream.length; ) {
        const target = reader.target();
        // A socket read fills at most the target, and at most what has arrived.
        const count = Math.min(target.length, maxRead, stream.length - at);
        target.set(stream.subarray(at, at + count));
        at += count;
        frames.push(...reader.advance(count));
      }
      expect(asComparable(frames), `reads of at most ${maxRead} bytes`).toEqual(asComparable(expected));
    }
  });

  it('reuses a frame buffer only once it is released, and only for a frame of its size', () => {
    // Room for one idle 64x48 frame.
    const reader = new PpmFrameReader(new FramePool(64 * 48 * 3));
    const [first, second] = reader.push(stream.subarray(0, headerAt[2])) as [PooledFrame, PooledFrame];
    expect(first.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(second.data.buffer).not.toBe(first.data.buffer);
    first.release();
    first.release(); // twice is once: the buffer must not serve two frames
    const [third] = reader.push(stream.subarray(0, bigFrame)) as [PooledFrame];
    expect(third.data.buffer).toBe(first.data.buffer);
    expect(asComparable([third])).toEqual(asComparable(expected.slice(0, 1)));
    const [fourth] = reader.push(stream.subarray(0, bigFrame)) as [PooledFrame];
    expect(fourth.data.buffer).not.toBe(first.data.buffer);
    // A released big buffer does not serve a small frame; and past its room the pool keeps nothing.
    fourth.release();
    third.release();
    const [small] = reader.push(stream.subarray(headerAt[2], headerAt[3])) as [PooledFrame];
    expect(small.data.byteLength).toBe(32 * 24 * 3);
    const [fifth, sixth] = reader.push(stream.subarray(0, headerAt[2])) as [PooledFrame, PooledFrame];
    expect(fifth.data.buffer).toBe(fourth.data.buffer);
    expect(sixth.data.buffer).not.toBe(third.data.buffer);
  });

  it('refuses a stream that is not binary rgb24 PPM', () => {
    expect(() => new PpmFrameReader().push(Buffer.from('GIF89a'))).toThrow(/not a binary PPM/);
    expect(() => new PpmFrameReader().push(Buffer.from('P6\n2 2\n65535\n'))).toThrow(/max value 65535/);
  });

  it('refuses a frame beyond its pixel cap, by default DCI 4K', () => {
    const reader = new PpmFrameReader(undefined, 64 * 48);
    expect(reader.push(testPattern('64x48', 1, 'ppm'))).toHaveLength(1);
    expect(() => reader.push(Buffer.from('P6\n65 48\n255\n'))).toThrow(/65x48, more than the 3072 pixels/);
    expect(() => new PpmFrameReader().push(Buffer.from('P6\n7680 4320\n255\n'))).toThrow(/7680x4320/);
  });
});

describe('videoStreamFps', () => {
  it('reads fps, else tbr, else 25 from the input stream line', () => {
    const lines: [string, number | null][] = [
      [
        '  Stream #0:0: Video: msmpeg4v3 (div3 / 0x33766964), yuv420p, 768x576, 816 kb/s, 10 fps, 10 tbr, 10 tbn',
        10,
      ],
      ['  Stream #0:0[0x100]: Video: h264 (High), yuv420p, 1920x1080, 29.97 fps, 29.97 tbr, 90k tbn', 29.97],
      ['  Stream #0:1(und): Video: h264, yuv420p, 640x480, 12.5 tbr, 1k tbn', 12.5],
      ['  Stream #0:0: Video: h264, yuv420p, 1280x720, 90k tbr, 90k tbn', 25],
      ['  Stream #0:1: Audio: aac (LC), 48000 Hz, stereo, fltp', null],
      ['  Duration: 00:01:19.50, start: 0.000000, bitrate: 818 kb/s', null],
    ];
    for (const [line, fps] of lines) expect(videoStreamFps(line), line).toBe(fps);
  });
});

describe('videoStreamSize and the analysis bound', () => {
  it('reads the picture size from the input stream line, not a codec tag', () => {
    expect(
      videoStreamSize(
        '  Stream #0:0(und): Video: h264 (High) (avc1 / 0x31637661), yuv420p(progressive), 3840x2160 [SAR 1:1 DAR 16:9], 25 fps',
      ),
    ).toEqual({ width: 3840, height: 2160 });
    expect(
      videoStreamSize('  Stream #0:0: Video: msmpeg4v3 (div3 / 0x33766964), yuv420p, 768x576, 816 kb/s'),
    ).toEqual({ width: 768, height: 576 });
    expect(videoStreamSize('  Stream #0:1: Audio: aac (LC), 48000 Hz, stereo, fltp')).toBeNull();
  });

  it('bounds the longer side to 1280 keeping the aspect, never upscales, and maps frames back to the source', () => {
    expect(MAX_FRAME_SIDE).toBe(1280);
    const sizes = [
      [3840, 2160],
      [1920, 1080],
      [1080, 1920],
      [2592, 1944],
      [768, 576],
    ].map(([width = 0, height = 0]) => boundedSize({ width, height }));
    expect(sizes).toEqual([
      { width: 1280, height: 720 },
      { width: 1280, height: 720 },
      { width: 720, height: 1280 },
      { width: 1280, height: 960 },
      { width: 768, height: 576 },
    ]);
    const uhd = { width: 3840, height: 2160 };
    expect(sourceSizeOf({ width: 1280, height: 720 }, uhd)).toEqual(uhd);
    // A frame that is not the described source bounded (the stream changed size) is its own source.
    expect(sourceSizeOf({ width: 640, height: 480 }, uhd)).toEqual({ width: 640, height: 480 });
    expect(sourceSizeOf({ width: 768, height: 576 }, null)).toEqual({ width: 768, height: 576 });
    // The engine's analysis size, when it names one.
    expect(boundedSize(uhd, 640)).toEqual({ width: 640, height: 360 });
    expect(sourceSizeOf({ width: 640, height: 360 }, uhd, 640)).toEqual(uhd);
    expect(sourceSizeOf({ width: 1280, height: 720 }, uhd, 640)).toEqual({ width: 1280, height: 720 });
  });
});

/** Frames of a source, without their pixels (a few seconds of 768x576 would be hundreds of MB). */
const frameFacts = (frame: SourceFrame | WatchdogFrame) => ({
  width: frame.width,
  height: frame.height,
  length: frame.data.length,
  receivedAt: frame.receivedAt,
  index: frame.index,
  synthetic: 'synthetic' in frame ? frame.synthetic : false,
  black: isBlack(frame.data),
});

const zeros = new Map<number, Buffer>();
/** Whether every byte is 0, compared natively: a per-byte callback would slow the event loop. */
function isBlack(data: Uint8Array): boolean {
  const zero = zeros.get(data.length) ?? Buffer.alloc(data.length);
  zeros.set(data.length, zero);
  return zero.equals(data);
}

/** ffmpeg clients still running for a URL marker (a client's URL is followed by -map, a server's is last). */
const clientsFor = (marker: string) =>
  spawnSync('pgrep', ['-f', `${marker} -map`])
    .stdout.toString()
    .trim();

describe('FrameSource', () => {
  it('builds ffmpeg arguments per kind of source', () => {
    const rtspArgs = new FrameSource({ kind: 'rtsp', input: 'rtsp://cam/1' }, { transport: 'udp' }).args();
    expect(rtspArgs.join(' ')).toContain(
      ' -rtsp_transport udp -dts_delta_threshold 2 -timeout 10000000 -i rtsp://cam/1 -map 0:v:0 ',
    );
    // RTMP is read as live FLV, whose timestamps ffmpeg mends when a publisher restarts.
    expect(new FrameSource({ kind: 'rtmp', input: 'rtmp://cam/1' }).args().join(' ')).toContain(
      ' -f live_flv -dts_delta_threshold 2 -rw_timeout 10000000 -i rtmp://cam/1 ',
    );
    expect(rtspArgs[rtspArgs.indexOf('-protocol_whitelist') + 1]).not.toContain('file');
    // One decoding thread, given before the input it applies to.
    expect(rtspArgs.indexOf('-threads')).toBeLessThan(rtspArgs.indexOf('-i'));
    expect(rtspArgs[rtspArgs.indexOf('-threads') + 1]).toBe('1');
    expect(rtspArgs).not.toContain('-re');
    const fileArgs = new FrameSource({ kind: 'file', input: VIDEO }, { outputFps: 5 }).args();
    // A null output of every decoded frame first, so that ffmpeg's progress on fd 3 counts them.
    expect(fileArgs.join(' ')).toContain(
      `-protocol_whitelist file -re -stream_loop -1 -i ${VIDEO} -map 0:v:0 -c:v wrapped_avframe -f null - -map 0:v:0 -an -sn -dn -vf fps=5,${boundingScaleFilter()} -f image2pipe`,
    );
    expect(fileArgs.join(' ')).toContain('-progress pipe:3 -stats_period 0.5');
    expect(rtspArgs[rtspArgs.indexOf('-vf') + 1]).toBe(boundingScaleFilter());
  });

  it('emits frames bounded to the analysis size asked, each knowing its source size', async () => {
    const source = new FrameSource({ kind: 'file', input: VIDEO }, { ffmpeg: FFMPEG, maxSide: 320 });
    expect(source.args()[source.args().indexOf('-vf') + 1]).toBe(boundingScaleFilter(320));
    cleanups.push(() => source.stop());
    const sizes: string[] = [];
    source.on('frame', ({ width, height, data, source: original, release }) => {
      sizes.push(`${width}x${height} ${data.length} of ${original.width}x${original.height}`);
      release();
    });
    source.start();
    while (sizes.length < 3) await once(source, 'frame');
    await source.stop();
    expect(sizes.slice(0, 3)).toEqual(Array(3).fill(`320x240 ${320 * 240 * 3} of 768x576`));
  });

  it('plays a file as live: 768x576 frames at 10 fps, and an fps filter when asked', async () => {
    const full = new FrameSource({ kind: 'file', input: VIDEO }, { ffmpeg: FFMPEG });
    const halved = new FrameSource({ kind: 'file', input: VIDEO }, { ffmpeg: FFMPEG, outputFps: 5 });
    const seen = new Map<FrameSource, { infos: SourceInfo[]; frames: ReturnType<typeof frameFacts>[] }>();
    const buffers: ArrayBufferLike[] = [];
    for (const source of [full, halved]) {
      const record = { infos: [] as SourceInfo[], frames: [] as ReturnType<typeof frameFacts>[] };
      seen.set(source, record);
      source.on('info', (info) => record.infos.push(info));
      source.on('frame', (frame) => {
        record.frames.push(frameFacts(frame));
        if (buffers.length < 2 && source === full) buffers.push(frame.data.buffer);
      });
      cleanups.push(() => source.stop());
      source.start();
    }
    await once(full, 'frame');
    const firstAt = performance.now();
    await sleep(2_000);
    const counted = (source: FrameSource) =>
      seen
        .get(source)
        ?.frames.filter((frame) => frame.receivedAt >= firstAt && frame.receivedAt < firstAt + 2_000).length;

    const fullRecord = seen.get(full);
    expect(fullRecord?.infos).toEqual([VIDEO_INFO]);
    expect(counted(full)).toBeGreaterThanOrEqual(15);
    expect(counted(full)).toBeLessThanOrEqual(25);
    expect(fullRecord?.frames.map((frame) => frame.index)).toEqual(fullRecord?.frames.map((_, i) => i));
    expect(
      fullRecord?.frames.every((f) => f.width === 768 && f.height === 576 && f.length === 768 * 576 * 3),
    ).toBe(true);
    expect(fullRecord?.frames.some((frame) => !frame.black)).toBe(true);
    expect(buffers[0]).not.toBe(buffers[1]);

    expect(seen.get(halved)?.infos).toEqual([{ ...VIDEO_INFO, fps: 5 }]);
    expect(counted(halved)).toBeGreaterThanOrEqual(7);
    expect(counted(halved)).toBeLessThanOrEqual(13);

    const exit = once(full, 'exit');
    await full.stop();
    expect((await exit)[0]).toMatchObject({ stopped: true });
    expect(isAlive(full.pid)).toBe(false);
  });

  it('counts what the source delivers (ffmpeg decoding it), not the frames left at a low output rate', async () => {
    const source = new FrameSource({ kind: 'file', input: VIDEO }, { ffmpeg: FFMPEG, outputFps: 0.1 });
    const progress: Array<{ frames: number; at: number }> = [];
    let emitted = 0;
    source.on('progress', (counted) => progress.push(counted));
    source.on('frame', ({ release }) => {
      emitted += 1;
      release();
    });
    cleanups.push(() => source.stop());
    source.start();
    // ffmpeg reports from its first output frame on (about 5 s in at 0.1 fps), then every 0.5 s.
    const until = performance.now() + 20_000;
    while (
      (progress.length < 2 || (progress.at(-1)?.at ?? 0) - (progress[0]?.at ?? 0) < 2_000) &&
      performance.now() < until
    )
      await sleep(200);
    await source.stop();
    const first = progress[0] as { frames: number; at: number };
    const last = progress.at(-1) as { frames: number; at: number };
    expect(last.at - first.at).toBeGreaterThanOrEqual(2_000);
    const delivered = ((last.frames - first.frames) * 1000) / (last.at - first.at);
    // vtest.avi is 10 fps, read as live; at most two frames left ffmpeg meanwhile.
    expect(delivered).toBeGreaterThan(7);
    expect(delivered).toBeLessThan(13);
    expect(emitted).toBeLessThanOrEqual(2);
    expect(source.inputFrames).toBe(last.frames);
  });

  it('stamps each frame with its place on the media clock, however fast the file is read', async () => {
    const source = new FrameSource(
      { kind: 'file', input: VIDEO },
      { ffmpeg: FFMPEG, outputFps: 5, readRate: 4 },
    );
    expect(source.args().join(' ')).toContain(`-readrate 4 -stream_loop -1 -i ${VIDEO}`);
    const frames: Array<{ receivedAt: number; mediaAt: number }> = [];
    source.on('frame', ({ receivedAt, mediaAt, release }) => {
      frames.push({ receivedAt, mediaAt });
      release();
    });
    cleanups.push(() => source.stop());
    source.start();
    while (frames.length < 21) await once(source, 'frame');
    await source.stop();
    const first = frames[0] as { receivedAt: number; mediaAt: number };
    const last = frames[20] as { receivedAt: number; mediaAt: number };
    // 20 frames of 5 fps are 4 s of the video, read in about 1 s.
    expect(first.mediaAt).toBe(first.receivedAt);
    expect(frames.map((f) => Math.round(f.mediaAt - first.mediaAt))).toEqual(frames.map((_, i) => i * 200));
    expect(last.receivedAt - first.receivedAt).toBeLessThan(2_000);
  });

  it('gives the same frames through its socket as through a stdout pipe, in recycled buffers', async () => {
    const firstFrames = async (readInPlace: boolean) => {
      const source = new FrameSource({ kind: 'file', input: VIDEO }, { ffmpeg: FFMPEG, readInPlace });
      cleanups.push(() => source.stop());
      const digests: string[] = [];
      const buffers = new Set<ArrayBufferLike>();
      const done = new Promise<void>((resolve) =>
        source.on('frame', (frame) => {
          digests.push(createHash('sha1').update(frame.data).digest('hex'));
          buffers.add(frame.data.buffer);
          frame.release();
          if (digests.length === 6) resolve();
        }),
      );
      source.start();
      await done;
      await source.stop();
      return { digests, buffers: buffers.size };
    };
    const [inPlace, piped] = [await firstFrames(true), await firstFrames(false)];
    expect(new Set(inPlace.digests).size).toBe(6);
    expect(inPlace.digests).toEqual(piped.digests);
    // Released frames come back: six frames in at most two buffers (one read, one held until 'info').
    expect(inPlace.buffers).toBeLessThanOrEqual(2);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`vc-frames-${process.pid}-`))).toEqual([]);
  });

  it('reports an exit it did not ask for, with ffmpeg’s error', async () => {
    const garbage = join(tmp, 'garbage.avi');
    writeFileSync(garbage, 'this is not a video\n'.repeat(100));
    const source = new FrameSource({ kind: 'file', input: garbage }, { ffmpeg: FFMPEG });
    cleanups.push(() => source.stop());
    const exit = once(source, 'exit');
    source.start();
    const [{ code, stopped, stderrTail }] = await exit;
    expect(code).toBe(1);
    expect(stopped).toBe(false);
    expect(source.lastError).toMatch(/Invalid data found when processing input/);
    expect(stderrTail).toContain(source.lastError);
  });
});

/** True once something listens on the loopback port (read from the kernel: a probe connection
 * would use up the single client an ffmpeg RTMP server takes). */
const listening = (port: number) => {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')} `;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .some((line) => line.includes(`0100007F${hexPort}`) && line.split(/\s+/)[4] === '0A');
};

/** ffmpeg serving vtest.avi, live, to one RTMP client. */
async function startRtmpServer(port: number, name: string): Promise<ChildProcess> {
  const server = spawn(
    FFMPEG,
    [
      ...['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', VIDEO],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10'],
      ...['-f', 'flv', '-listen', '1', `rtmp://127.0.0.1:${port}/live/${name}`],
    ],
    { stdio: 'ignore' },
  );
  cleanups.push(() => killProcess(server));
  for (let waited = 0; !listening(port); waited += 50) {
    if (waited > 5_000 || server.exitCode !== null) throw new Error(`RTMP server on ${port} did not listen`);
    await sleep(50);
  }
  return server;
}

async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

function waitFor<T extends unknown[]>(
  emitter: EventEmitter,
  event: string,
  timeoutMs: number,
  accept: (...args: T) => boolean = () => true,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`no '${event}' within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (...args: T) => {
      if (!accept(...args)) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve(args);
    };
    emitter.on(event, listener);
  });
}

/**
 * A watchdog whose ffmpeg processes are all remembered, to prove none survives. Its timers run on
 * the ManualClock given, if any: the test moves time, the ffmpeg processes are real.
 */
function trackedWatchdog(
  source: SourceUrl,
  options: ConstructorParameters<typeof StreamWatchdog>[1] & { manual?: ManualClock } = {},
) {
  const sources: FrameSource[] = [];
  /** Each source's exit, seen before the watchdog's own listener sees it. */
  const exits: Promise<unknown>[] = [];
  const states: WatchdogState[] = [];
  const { manual, ...rest } = options;
  const watchdog = new StreamWatchdog(source, {
    ...rest,
    ...(manual && { clock: manual, streamClock: manual }),
    createSource: (url, transport) => {
      const created = new FrameSource(url, { ffmpeg: FFMPEG, transport, ioTimeoutMs: 5_000 });
      sources.push(created);
      exits.push(once(created, 'exit'));
      return created;
    },
  });
  watchdog.on('state', (state) => states.push(state));
  cleanups.push(() => watchdog.close());
  const noFfmpegLeft = () => {
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.filter((created) => isAlive(created.pid))).toEqual([]);
  };
  return { watchdog, sources, exits, states, noFfmpegLeft };
}

const rtmp = (port: number, name: string): SourceUrl => ({
  kind: 'rtmp',
  input: `rtmp://127.0.0.1:${port}/live/${name}`,
});

describe('StreamWatchdog', () => {
  it('fills a dropped RTMP stream with black frames and restores it when the server is back', async () => {
    const port = await freePort();
    const name = `restore-${randomUUID()}`;
    let server = await startRtmpServer(port, name);
    const clock = new ManualClock();
    const { watchdog, states, noFfmpegLeft } = trackedWatchdog(rtmp(port, name), {
      manual: clock,
      backoffFirstMs: 300,
      backoffMaxMs: 600,
      framePool: new FramePool(8 * 1024 * 1024),
    });
    const frames: ReturnType<typeof frameFacts>[] = [];
    watchdog.on('frame', (frame) => frames.push(frameFacts(frame)));
    // A consumer gives each black frame back when done, here after painting on it: the next one is
    // the same buffer (no allocation per frame while lost), blank again.
    const blackBuffers = new Set<ArrayBufferLike>();
    watchdog.on('frame', (frame) => {
      if (!frame.synthetic) return;
      blackBuffers.add(frame.data.buffer);
      frame.data.fill(255, 0, 4096);
      frame.release?.();
    });

    expect(await watchdog.start(15_000)).toEqual(VIDEO_INFO);
    expect(watchdog.state).toBe('running');
    await waitFor(watchdog, 'frame', 5_000);
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.every((frame) => !frame.synthetic && frame.width === 768)).toBe(true);

    const lost = waitFor<[{ reason: string }]>(watchdog, 'lost', 10_000);
    await killProcess(server);
    const [{ reason }] = await lost;
    expect(reason).toContain(`rtmp://127.0.0.1:${port}/live/${name}`);
    expect(watchdog.state).not.toBe('running');
    expect(watchdog.lastError).toBe(reason);

    // One second of the clock brings one second of black frames at the stream's 10 fps.
    const realFrames = frames.length;
    clock.advance(1_000);
    const black = frames.slice(realFrames);
    expect(black.length).toBe(10);
    expect(
      black.every((frame) => frame.synthetic && frame.black && frame.width === 768 && frame.height === 576),
    ).toBe(true);
    expect(blackBuffers.size).toBe(1);
    expect(watchdog.fps).toBe(0);
    expect(watchdog.reconnects).toBe(0);
    expect(states).toContain('reconnecting');

    // The try made at 300 ms is refused; with the clock still, no other is made while the server
    // starts (an RTMP server takes one client: a try in flight would take its place).
    if (watchdog.state !== 'reconnecting')
      await waitFor(watchdog, 'state', 5_000, (state) => state === 'reconnecting');
    server = await startRtmpServer(port, name);
    // Each failed try waits its backoff on the clock, moved on as soon as it is asked for.
    const backoffPassed = (state: WatchdogState) => {
      if (state === 'reconnecting') setImmediate(() => clock.advance(600));
    };
    watchdog.on('state', backoffPassed);
    const restored = waitFor<[SourceInfo]>(watchdog, 'restored', 20_000);
    clock.advance(600);
    expect((await restored)[0]).toEqual(VIDEO_INFO);
    watchdog.off('state', backoffPassed);
    const atRestore = frames.length;
    let realAgain = 0;
    await waitFor<[WatchdogFrame]>(
      watchdog,
      'frame',
      5_000,
      (frame) => !frame.synthetic && ++realAgain === 3,
    );
    // Real frames again: time going on brings no more black ones.
    clock.advance(1_000);
    expect(frames.slice(atRestore).every((frame) => !frame.synthetic)).toBe(true);
    expect(watchdog.state).toBe('running');
    expect(watchdog.reconnects).toBe(1);
    // Measured afresh from the new ffmpeg's count once its catch-up is over: the source's 10 fps, not
    // the 5 s it buffered while probing, decoded at once.
    const measuredBy = performance.now() + 8_000;
    while (watchdog.fps === 0 && performance.now() < measuredBy) await sleep(100);
    expect(watchdog.fps).toBeGreaterThan(7);
    expect(watchdog.fps).toBeLessThan(13);
    expect(frames.map((frame) => frame.index)).toEqual(frames.map((_, i) => i));

    await watchdog.close();
    expect(watchdog.state).toBe('closed');
    noFfmpegLeft();
    expect(clientsFor(name)).toBe('');
  }, 45_000);

  it('declares a silent stream stalled, backs off on its clock and closes cleanly while reconnecting', async () => {
    const port = await freePort();
    const name = `stall-${randomUUID()}`;
    const server = await startRtmpServer(port, name);
    const clock = new ManualClock();
    const { watchdog, states, sources, noFfmpegLeft } = trackedWatchdog(rtmp(port, name), {
      manual: clock,
      stallMinMs: 1_000,
      backoffFirstMs: 2_000,
    });
    await watchdog.start(15_000);

    const lost: string[] = [];
    watchdog.on('lost', ({ reason }) => lost.push(reason));
    server.kill('SIGSTOP');
    clock.advance(999);
    expect([watchdog.state, lost]).toEqual(['running', []]);
    clock.advance(1);
    expect([watchdog.state, lost]).toEqual(['stalled', ['no frame for 1 s']]);
    await waitFor(watchdog, 'state', 5_000, (state) => state === 'reconnecting');
    expect(states.slice(-3)).toEqual(['running', 'stalled', 'reconnecting']);
    expect(isAlive(sources[0]?.pid)).toBe(false);

    // The backoff waits for the injected clock, not for real time.
    clock.advance(1_999);
    expect(watchdog.state).toBe('reconnecting');
    expect(sources.length).toBe(1);
    clock.advance(1);
    expect([watchdog.state, sources.length]).toEqual(['connecting', 2]);

    await watchdog.close();
    expect(watchdog.state).toBe('closed');
    clock.advance(60_000);
    expect(sources.length).toBe(2);
    noFfmpegLeft();
    expect(clientsFor(name)).toBe('');
  }, 30_000);

  it('keeps knocking until the pull timeout when nothing listens, then rejects, leaving no ffmpeg', async () => {
    const name = `refused-${randomUUID()}`;
    const clock = new ManualClock();
    const { watchdog, sources, exits, noFfmpegLeft } = trackedWatchdog(rtmp(await freePort(), name), {
      manual: clock,
    });
    const started = watchdog.start(3_000).catch((error: Error) => error.message);
    // Each ffmpeg is refused for real; the 500 ms pause before the next try passes on the clock.
    for (let tried = 1; tried <= 6; tried++) {
      await exits[tried - 1];
      expect(sources.length).toBe(tried);
      clock.advance(500);
    }
    expect(await started).toMatch(/^no video frame within 3 s: .*Connection refused/);
    expect(sources.length).toBe(6);
    expect(watchdog.state).toBe('closed');
    noFfmpegLeft();
    expect(clientsFor(name)).toBe('');
  });

  describe('against a server that accepts and says nothing', () => {
    const connections: Socket[] = [];
    let silent: Server;
    let port: number;

    const listenSilently = async () => {
      silent = createServer((socket) => connections.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      port = (silent.address() as { port: number }).port;
      cleanups.push(() => {
        for (const socket of connections.splice(0)) socket.destroy();
        return new Promise((resolve) => silent.close(resolve));
      });
    };

    it('rejects when no frame comes within the timeout, leaving no ffmpeg', async () => {
      await listenSilently();
      const name = `timeout-${randomUUID()}`;
      const clock = new ManualClock();
      const { watchdog, noFfmpegLeft } = trackedWatchdog(rtmp(port, name), { manual: clock });
      const connected = once(silent, 'connection');
      const started = watchdog.start(2_000).catch((error: Error) => error.message);
      await connected;
      clock.advance(1_999);
      expect(watchdog.state).toBe('connecting');
      clock.advance(1);
      expect(await started).toMatch(/^no video frame within 2 s/);
      expect(connections.length).toBe(1);
      expect(watchdog.state).toBe('closed');
      noFfmpegLeft();
      expect(clientsFor(name)).toBe('');
    });

    it('closes from connecting, leaving no ffmpeg', async () => {
      await listenSilently();
      const name = `connecting-${randomUUID()}`;
      const { watchdog, sources, noFfmpegLeft } = trackedWatchdog(rtmp(port, name));
      const connected = once(silent, 'connection');
      const started = watchdog.start(10_000).then(
        () => new Error('start() resolved'),
        (error: Error) => error,
      );
      await connected;
      expect(watchdog.state).toBe('connecting');
      expect(isAlive(sources[0]?.pid)).toBe(true);
      await watchdog.close();
      expect((await started).message).toBe('closed before the first frame');
      expect(watchdog.state).toBe('closed');
      noFfmpegLeft();
      expect(clientsFor(name)).toBe('');
      await watchdog.close();
    });
  });

  it('rejects a file ffmpeg cannot read with ffmpeg’s own message', async () => {
    const garbage = join(tmp, `garbage-${randomUUID()}.mp4`);
    writeFileSync(garbage, Buffer.alloc(4096, 0x5a));
    const { watchdog, noFfmpegLeft } = trackedWatchdog({ kind: 'file', input: garbage });
    await expect(watchdog.start(3_000)).rejects.toThrow(/Invalid data found when processing input/);
    expect(watchdog.state).toBe('closed');
    noFfmpegLeft();
  });
});
