import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIP_BUFFER_LIMITS, ClipBuffers } from '../engine/clips/clip-buffers';
import { type SegmentTarget, segmentNameOf } from '../engine/clips/segment-output';
import { FrameSource } from '../engine/media/frame-source';
import { StreamWatchdog } from '../engine/media/stream-watchdog';
import { isAlive } from './helpers/child';
import { startMotionTask, startTestEngine, type TestEngine, taskView } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { VIDEO } from './helpers/fixtures';
import { frameNumber, NUMBERED, numberedVideo } from './helpers/numbered-video';
import { SmallDisk } from './helpers/small-disk';

/**
 * A stream that cannot be kept for clips has its recording turned off, and the analysis goes on
 * untouched: the source's ffmpeg is opened again without the segment output, make-before-break (no
 * frame lost, the stream never counted lost), as the engine wires ClipBuffers to its watchdogs.
 */

const FFMPEG = process.env.FFMPEG_BIN ?? '/usr/bin/ffmpeg';
const tmp = mkdtempSync(join(tmpdir(), 'vc-clip-off-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The bytes the task's buffer holds on disk now. */
function bufferBytes(dir: string): number {
  let bytes = 0;
  for (const name of readdirSync(dir)) bytes += statSync(join(dir, name)).size;
  return bytes;
}

/**
 * A file task's stream read as the engine reads it, its buffer in ClipBuffers with `maxOpenMs`;
 * `spoil` may do something to the buffer before each ffmpeg starts; the buffer lies under `root`.
 */
async function watch(
  name: string,
  file: string,
  maxOpenMs: number,
  spoil = (_dir: string, _run: number) => {},
  root = tmp,
) {
  const taskId = `task-${name}`;
  let watchdog: StreamWatchdog | undefined;
  const buffers = new ClipBuffers(
    join(root, name),
    { ...CLIP_BUFFER_LIMITS, maxOpenMs, pollMs: 100 },
    () => void watchdog?.reopen(),
  );
  const sources: FrameSource[] = [];
  const targets: (SegmentTarget | undefined)[] = [];
  watchdog = new StreamWatchdog(
    { kind: 'file', input: file },
    {
      createSource: (url, transport, mode) => {
        const record = buffers.target(taskId);
        targets.push(record);
        const source = new FrameSource(url, { ffmpeg: FFMPEG, transport, seekS: mode.seekS, record });
        buffers.follow(taskId, source.run, source);
        spoil(join(root, name, taskId), source.run);
        sources.push(source);
        return source;
      },
    },
  );
  const frames: number[] = [];
  const lost: string[] = [];
  watchdog.on('frame', (frame) => {
    frames.push(frame.synthetic ? -1 : frameNumber(frame));
    frame.release?.();
  });
  watchdog.on('lost', ({ reason }) => lost.push(reason));
  await watchdog.start(30_000);
  const dir = join(root, name, taskId);
  const close = async () => {
    await watchdog?.close();
    buffers.close();
  };
  return { taskId, buffers, watchdog, sources, targets, frames, lost, dir, close };
}

/** Whether a FrameSource's ffmpeg copies the stream into segments. */
const records = (source: FrameSource) => source.args().includes('segment');

describe('recording turned off, the analysis untouched', () => {
  it('stops recording an H.264 stream without keyframes once its open segment is past the bound', async () => {
    // One keyframe in 60 s: the segment muxer's open segment would grow for the whole minute.
    const w = await watch('no-keyframes', numberedVideo(60, 60 * NUMBERED.fps), 3_000);
    try {
      expect(w.buffers.state(w.taskId)).toEqual({ clips: 'recording', reason: null });
      expect(records(w.sources[0] as FrameSource)).toBe(true);
      const state = await eventually(
        'no_keyframes',
        () => w.buffers.state(w.taskId).clips !== 'recording' && w.buffers.state(w.taskId),
        20_000,
        100,
      );
      expect(state).toMatchObject({
        clips: 'no_keyframes',
        reason: expect.stringMatching(/no keyframe for 3 s/),
      });
      // Opened again without the segment output, and that ffmpeg now feeds the stream.
      await eventually(
        'the reopened source to take over',
        () => w.sources.length === 2 && w.frames.length,
        20_000,
      );
      const reopened = w.sources[1] as FrameSource;
      expect(records(reopened)).toBe(false);
      await eventually('the recording ffmpeg to exit', () => !isAlive(w.sources[0]?.pid), 10_000);
      // Nothing grows in the buffer any more: the open segment went with its run.
      const bytes = bufferBytes(w.dir);
      await sleep(1_500);
      expect(bufferBytes(w.dir)).toBe(bytes);
      expect(bytes).toBe(0);
      expect(w.buffers.segments(w.taskId, 0, Number.POSITIVE_INFINITY)).toEqual([]);
      // The analysis never lost the stream, and its frames go on in order from where they were.
      expect(w.lost).toEqual([]);
      expect(w.watchdog.reconnects).toBe(0);
      expect(w.watchdog.state).toBe('running');
      const before = w.frames.length;
      await sleep(1_000);
      expect(w.frames.length).toBeGreaterThan(before);
      expect(w.frames).not.toContain(-1);
      const last = w.frames.at(-1) ?? 0;
      expect(last).toBeGreaterThan(4 * NUMBERED.fps); // continued, not rewound to the start
      // The state holds: the task records no more until it stops.
      expect(w.buffers.target(w.taskId)).toBeUndefined();
    } finally {
      await w.close();
    }
  }, 90_000);

  it("turns recording off for a codec MPEG-TS cannot carry (the fixture's MS-MPEG4v3), at once", async () => {
    const w = await watch('codec', VIDEO, 20_000);
    try {
      const state = await eventually(
        'clips off',
        () => w.buffers.state(w.taskId).clips !== 'recording' && w.buffers.state(w.taskId),
        15_000,
        100,
      );
      expect(state).toEqual({ clips: 'off', reason: expect.stringMatching(/not msmpeg4v3$/) });
      await eventually('the reopened source to take over', () => w.sources.length === 2, 15_000);
      expect(records(w.sources[1] as FrameSource)).toBe(false);
      await eventually('the recording ffmpeg to exit', () => !isAlive(w.sources[0]?.pid), 10_000);
      const before = w.frames.length;
      await sleep(1_000);
      expect(w.frames.length).toBeGreaterThan(before);
      expect(w.lost).toEqual([]);
      expect(w.watchdog.reconnects).toBe(0);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe('a recording that cannot start', () => {
  it('is tried once more, probed fully, then turned off: the analysis starts all the same', async () => {
    // ffmpeg's first segment file is a link into nowhere: its recording output cannot start, and
    // ffmpeg would then wait with no frame for anything.
    const w = await watch('unwritable', numberedVideo(60, 2 * NUMBERED.fps), 20_000, (dir, run) => {
      mkdirSync(dir, { recursive: true });
      symlinkSync(join(tmp, 'nowhere', 'segment.ts'), join(dir, segmentNameOf(run, 0)));
    });
    try {
      const startFailed = {
        atStart: true,
        message: expect.stringMatching(/^Could not write header for output file #2 /),
      };
      expect(w.sources.map((source) => source.recordError)).toEqual([startFailed, startFailed, null]);
      expect(w.sources.map(records)).toEqual([true, true, false]);
      expect(w.targets.map((target) => target?.fullProbe)).toEqual([false, true, undefined]);
      // Probed fully: a network source's ffmpeg without the quick start's half second.
      const camera = { kind: 'rtsp', input: 'rtsp://127.0.0.1:9/camera' } as const;
      const args = (fullProbe: boolean) =>
        new FrameSource(camera, { record: { dir: w.dir, segmentS: 1, fullProbe } }).args();
      expect(args(false)).toContain('-analyzeduration');
      expect(args(true)).not.toContain('-analyzeduration');
      expect(w.buffers.state(w.taskId)).toEqual({
        clips: 'off',
        reason: expect.stringMatching(/^the recording could not start: Could not write header/),
      });
      const before = w.frames.length;
      await sleep(1_000);
      expect(w.frames.length).toBeGreaterThan(before);
      expect(w.lost).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe('a full disk', () => {
  const disk = SmallDisk.create(2);
  afterAll(() => disk.dispose());

  // A disk that really fills needs a tmpfs of its own (root); SQLite's page limit, SmallDisk's
  // stand-in elsewhere, does not bound files.
  it.runIf(disk.mode === 'tmpfs')(
    'turns recording off, not the analysis',
    async () => {
      const w = await watch('disk-full', numberedVideo(60, 2 * NUMBERED.fps), 20_000, () => {}, disk.dataDir);
      try {
        const state = await eventually(
          'clips off',
          () => w.buffers.state(w.taskId).clips !== 'recording' && w.buffers.state(w.taskId),
          40_000,
          100,
        );
        expect(state).toEqual({
          clips: 'off',
          reason: expect.stringMatching(/^the recording failed: .*No space left on device/),
        });
        expect(w.sources.at(-1)?.recordError).toBeNull();
        expect(records(w.sources.at(-1) as FrameSource)).toBe(false);
        await eventually('the stream to run again', () => w.watchdog.state === 'running', 20_000);
        const before = w.frames.length;
        await sleep(1_000);
        expect(w.frames.length).toBeGreaterThan(before);
        // ffmpeg ends every output when one cannot be written: the stream was lost once at most.
        expect(w.lost.length).toBeLessThanOrEqual(1);
      } finally {
        await w.close();
      }
    },
    90_000,
  );
});

describe("the engine's task health says whether clips are recorded", () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(() => t?.stop());

  it('recording for an H.264 file, off with the reason for the MS-MPEG4v3 fixture, neither stream lost', async () => {
    const h264 = await startMotionTask(t, { video_url: numberedVideo(60, 2 * NUMBERED.fps) });
    const msmpeg4 = await startMotionTask(t, {});
    expect([h264.status, msmpeg4.status]).toEqual([200, 200]);
    const ids = [h264, msmpeg4].map((answer) => (answer.body.data as { task_id: string }).task_id);
    const health = async (id: string) => (await taskView(t, id)).health;
    const off = await eventually('the fixture task to have clips off', async () => {
      const seen = await health(ids[1] as string);
      return seen.clips === 'off' && seen;
    });
    expect(off.clips_reason).toMatch(/not msmpeg4v3$/);
    // Opened again without recording, make-before-break: never lost, still analysed.
    const analysed = off.frames_analysed;
    await eventually('the fixture task to go on analysing', async () => {
      const seen = await health(ids[1] as string);
      return seen.frames_analysed > analysed + 5 && seen;
    });
    const after = await health(ids[1] as string);
    expect(after.stream).toMatchObject({ state: 'running', reconnects: 0 });
    expect(after.stream_lost_since).toBeNull();
    const recording = await health(ids[0] as string);
    expect([recording.clips, recording.clips_reason]).toEqual(['recording', null]);
  }, 90_000);
});

describe('an ffmpeg run that ended (its stream dropped, the next after a backoff)', () => {
  it('leaves its unfinished segment unjudged: an outage longer than maxOpenMs keeps clips recording', async () => {
    const taskId = 'task-outage';
    const buffers = new ClipBuffers(join(tmp, 'outage'), {
      ...CLIP_BUFFER_LIMITS,
      maxOpenMs: 200,
      pollMs: 50,
    });
    try {
      const run = 7;
      const source = { codec: 'h264', recordError: null, alive: false };
      const target = buffers.target(taskId);
      if (!target) throw new Error('the task records');
      buffers.follow(taskId, run, source);
      // The run's last segment, begun and never closed: its ffmpeg ended mid-segment.
      writeFileSync(join(target.dir, segmentNameOf(run, 0)), Buffer.alloc(1024));
      await sleep(600);
      expect(buffers.state(taskId)).toEqual({ clips: 'recording', reason: null });
      // The same open segment under a running ffmpeg is a stream without keyframes.
      source.alive = true;
      await eventually(
        'the open segment judged',
        () => buffers.state(taskId).clips === 'no_keyframes',
        5_000,
        50,
      );
    } finally {
      buffers.close();
    }
  });
});
