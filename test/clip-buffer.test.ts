import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { cutClip } from '../engine/clips/cut-clip';
import { type Segment, SegmentRing } from '../engine/clips/segment-ring';
import { FrameSource } from '../engine/media/frame-source';
import { fastStart, packetTimes, pictureHashes, probeClip } from './helpers/clip-probe';

const FFMPEG = process.env.FFMPEG_BIN ?? '/usr/bin/ffmpeg';
const tmp = mkdtempSync(join(tmpdir(), 'vc-clip-buffer-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('SegmentRing', () => {
  /** A buffer dir where the test plays ffmpeg: segment files of `bytes` each, listed when "closed". */
  function fakeRun(name: string) {
    const dir = join(tmp, name);
    mkdirSync(dir);
    let now = 100_000;
    const ring = new SegmentRing(dir, { keepMs: 5_000, maxBytes: 1_000, maxOpenMs: 3_000, now: () => now });
    const close = (run: number, index: number, start: number, end: number, bytes = 100) => {
      const file = `${run}-${String(index).padStart(6, '0')}.ts`;
      writeFileSync(join(dir, file), Buffer.alloc(bytes));
      appendFileSync(join(dir, `${run}.csv`), `${file},${start.toFixed(6)},${end.toFixed(6)}\n`);
    };
    return { dir, ring, close, at: (ms: number) => (now = ms) };
  }

  it('places each segment by when its line was read and by its duration', () => {
    const { ring, close, at } = fakeRun('place');
    ring.follow(1);
    close(1, 0, 0, 2);
    at(102_000);
    ring.poll();
    close(1, 1, 2, 4.5);
    at(104_400);
    ring.poll();
    // Read 100 ms late, the next one starts where this one ended: no instant falls between them.
    close(1, 2, 4.5, 6.5);
    at(106_500);
    ring.poll();
    expect(ring.between(0, Number.POSITIVE_INFINITY).map(({ startAt, endAt }) => [startAt, endAt])).toEqual([
      [100_000, 102_000],
      [101_900, 104_400],
      [104_400, 106_500],
    ]);
    // Only the segments that overlap the asked span.
    expect(ring.between(104_500, 110_000).map((segment) => segment.endAt)).toEqual([106_500]);
  });

  it('removes segments past the time kept and past the bytes, oldest first, with their files', () => {
    const { dir, ring, close, at } = fakeRun('bounds');
    ring.follow(1);
    for (let i = 0; i < 4; i++) {
      close(1, i, i, i + 1);
      at(100_000 + (i + 1) * 1_000);
      ring.poll();
    }
    // keepMs 5 s: at 109 s the segments that ended before 104 s go.
    at(109_000);
    ring.poll();
    expect(ring.between(0, Number.POSITIVE_INFINITY).map((segment) => segment.endAt)).toEqual([104_000]);
    expect(readdirSync(dir).sort()).toEqual(['1-000003.ts', '1.csv']);
    // maxBytes 1,000: one large segment pushes the older out.
    close(1, 4, 4, 5, 950);
    ring.poll();
    expect(ring.between(0, Number.POSITIVE_INFINITY).map((segment) => segment.bytes)).toEqual([950]);
    expect(ring.bytes).toBe(950);
  });

  it('says when the open segment waits for a keyframe too long or grows past the bytes', () => {
    const { dir, ring, close, at } = fakeRun('open');
    ring.follow(1);
    ring.poll();
    expect(ring.overgrown()).toBeNull(); // nothing written yet
    writeFileSync(join(dir, '1-000000.ts'), Buffer.alloc(100));
    expect(ring.overgrown()).toBeNull();
    at(103_000);
    expect(ring.overgrown()).toBeNull(); // maxOpenMs 3 s: not past it yet
    at(103_001);
    expect(ring.overgrown()).toMatch(/no keyframe for 3 s/);
    // A keyframe closes it: the next one is timed from when it is first seen.
    close(1, 0, 0, 3);
    ring.poll();
    writeFileSync(join(dir, '1-000001.ts'), Buffer.alloc(100));
    expect(ring.overgrown()).toBeNull();
    at(105_000);
    expect(ring.overgrown()).toBeNull();
    // maxBytes 1,000: an open segment past it is overgrown however young.
    appendFileSync(join(dir, '1-000001.ts'), Buffer.alloc(901));
    expect(ring.overgrown()).toMatch(/no keyframe in 1001 bytes/);
    // Only the latest run's open segment counts: a new ffmpeg starts afresh.
    ring.follow(2);
    expect(ring.overgrown()).toBeNull();
  });

  it('forgets an ended run with the segment its ffmpeg never listed', () => {
    const { dir, ring, close, at } = fakeRun('runs');
    ring.follow(1);
    close(1, 0, 0, 1);
    writeFileSync(join(dir, '1-000001.ts'), Buffer.alloc(10)); // killed before it closed this one
    at(101_000);
    ring.poll();
    ring.follow(2);
    close(2, 0, 0, 1);
    at(107_000);
    ring.poll();
    expect(readdirSync(dir).sort()).toEqual(['2-000000.ts', '2.csv']);
    ring.dispose();
    expect(existsSync(dir)).toBe(false);
  });
});

describe("a clip from the decoding ffmpeg's own copy of the stream (real ffmpeg)", () => {
  it("cuts the last seconds as a fast-start MP4 of the source's packets, never re-encoded", async () => {
    // 12 s of H.264 at 25 fps with a keyframe every second, played live (-re) by the frame source.
    const source = join(tmp, 'source.mp4');
    execFileSync(FFMPEG, [
      ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25'],
      ...['-t', '12', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-y', source],
    ]);
    const dir = join(tmp, 'buffer');
    mkdirSync(dir);
    const frames = new FrameSource(
      { kind: 'file', input: source },
      { ffmpeg: FFMPEG, record: { dir, segmentS: 1 } },
    );
    const ring = new SegmentRing(dir, { keepMs: 30_000, maxBytes: 64 * 1024 * 1024, maxOpenMs: 20_000 });
    ring.follow(frames.run);
    frames.on('frame', (frame) => frame.release());
    frames.start();
    try {
      const until = Date.now() + 60_000;
      while (ring.between(Date.now() - 5_000, Date.now()).length < 5 && Date.now() < until) {
        await sleep(250);
        ring.poll();
      }
    } finally {
      const exited = once(frames, 'exit');
      frames.stop();
      await exited;
    }
    const now = Date.now();
    const segments = ring.between(now - 4_000, now);
    const clip = await cutClip(FFMPEG, segments, join(tmp, 'clip.mp4'));
    const { stream, duration } = probeClip(clip.file);
    expect([stream.codec_name, stream.width, clip.codec]).toEqual(['h264', 640, 'h264']);
    // Whole 1 s segments covering the 4 s asked: 4 to 5 of them, as long as the span it says it covers.
    expect(duration).toBeGreaterThanOrEqual(3.9);
    expect(duration).toBeLessThanOrEqual(6.1);
    expect(Math.abs((clip.endAt - clip.startAt) / 1000 - duration)).toBeLessThan(0.6);
    // Copied: the clip's pictures are a run of the source's (it loops, hence twice over).
    const pictures = pictureHashes(clip.file).join(',');
    const looped = [...pictureHashes(source), ...pictureHashes(source)].join(',');
    expect(pictures.length).toBeGreaterThan(0);
    expect(looped.includes(pictures)).toBe(true);
    expect(fastStart(clip.file)).toBe(true);
    ring.dispose();
  }, 90_000);
});

describe('cutting a clip from segments (real ffmpeg)', () => {
  // A camera's stream: H.264 with B-frames, a keyframe every 2 s.
  const camera = join(tmp, 'camera.flv');
  execFileSync(FFMPEG, [
    ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25'],
    ...['-t', '10', '-c:v', 'libx264', '-preset', 'veryfast', '-g', '50', '-y', camera],
  ]);

  /**
   * A recorder run as the engine writes one: the camera's first `seconds` copied into 1 s MPEG-TS
   * segments, its timestamps from 0; a run cut short by a lost stream ends inside a group of pictures.
   */
  function recordedRun(run: number, seconds: number): Segment[] {
    const dir = join(tmp, `run-${run}`);
    mkdirSync(dir);
    execFileSync(FFMPEG, [
      ...['-hide_banner', '-loglevel', 'error', '-t', String(seconds), '-i', camera, '-map', '0:v:0'],
      ...['-c', 'copy', '-f', 'segment', '-segment_time', '1', '-segment_format', 'mpegts'],
      join(dir, '%03d.ts'),
    ]);
    return readdirSync(dir)
      .sort()
      .map((name, i) => ({ run, file: join(dir, name), startAt: i * 1000, endAt: (i + 1) * 1000, bytes: 0 }));
  }

  it('joins two runs, the first cut short and both timed from 0, into one clip timed on without a repeat', async () => {
    const segments = [...recordedRun(1, 3.5), ...recordedRun(2, 3.5)];
    const clip = await cutClip(FFMPEG, segments, join(tmp, 'two-runs.mp4'));
    const pts = packetTimes(clip.file);
    // Read as one stream, the second run's first frame took the first run's last time.
    expect(pts).toHaveLength(180);
    expect(new Set(pts).size).toBe(180);
    expect(Math.max(...pts)).toBeCloseTo(7.4, 5);
    expect(clip.codec).toBe('h264');
  });

  it('fails when a segment cannot be read, rather than cut a clip short, and leaves no file', async () => {
    const segments = recordedRun(3, 3);
    const [, gone] = segments;
    rmSync(gone?.file as string);
    const file = join(tmp, 'short.mp4');
    await expect(cutClip(FFMPEG, segments, file)).rejects.toThrow(/ENOENT/);
    expect(readdirSync(tmp).filter((name) => name.startsWith('short.mp4'))).toEqual([]);
  });
});
