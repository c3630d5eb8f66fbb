import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FrameSnapshots, type RgbFrame } from '../engine/pipeline/frame-snapshots';
import type { AnalysedFrame } from '../engine/pipeline/task-pipeline';

/**
 * Which frames FrameSnapshots keeps, and for how long (issue 31, item 13): a stand-in for the video
 * analysis hands it analysed frames (the analysis itself runs in task-snapshot.test.ts), on a time
 * the test moves, so that what is kept is read as values: the watchers it holds and the frames it
 * answers with.
 */

class Analysis {
  readonly listeners = new Map<string, Set<(frame: AnalysedFrame) => void>>();
  readonly intervals = new Map<string, number>();
  /** The pixels of the last frame handed over: the analysis' pooled buffer. */
  lastData: Uint8Array | null = null;

  watch(taskId: string, listener: (frame: AnalysedFrame) => void): () => void {
    const set = this.listeners.get(taskId) ?? new Set();
    this.listeners.set(taskId, set);
    set.add(listener);
    return () => set.delete(listener);
  }

  frameIntervalMs(taskId: string): number | undefined {
    return this.intervals.get(taskId);
  }

  watching(taskId: string): number {
    return this.listeners.get(taskId)?.size ?? 0;
  }

  /** An analysed frame of the task: pixels all `value`, or a black fill frame (null). */
  analyse(taskId: string, value: number | null): void {
    const frame =
      value === null ? null : { data: new Uint8Array(4 * 2 * 3).fill(value), width: 4, height: 2 };
    this.lastData = frame?.data ?? null;
    for (const listener of this.listeners.get(taskId) ?? []) listener({ frame } as AnalysedFrame);
  }
}

let now = 0;
let analysis: Analysis;
let snapshots: FrameSnapshots;
const value = (frame: RgbFrame | null) => frame?.data[0] ?? null;

beforeEach(() => {
  vi.useFakeTimers();
  now = 0;
  analysis = new Analysis();
  analysis.intervals.set('slow', 10_000);
  analysis.intervals.set('fast', 100);
  snapshots = new FrameSnapshots(analysis, () => now);
});
afterEach(() => vi.useRealTimers());

describe('FrameSnapshots', () => {
  it('keeps nothing of a task whose picture nobody asked for', () => {
    analysis.analyse('slow', 1);
    expect([analysis.watching('slow'), analysis.watching('fast')]).toEqual([0, 0]);
  });

  it('waits for the first frame as long as the task’s rate needs, then answers with the latest at once', async () => {
    const first = snapshots.frame('slow');
    // A 0.1 fps task: its next frame may be 10 s away; the ask waits that and 5 s more.
    vi.advanceTimersByTime(14_000);
    now = 14_000;
    analysis.analyse('slow', 7);
    const frame = await first;
    expect(value(frame)).toBe(7);
    now = 20_000;
    expect(value(await snapshots.frame('slow'))).toBe(7);
    expect(snapshots.waitMs('slow')).toBe(15_000);
    // A copy: the analysis' pooled buffer is not kept. One watcher, for the task asked about.
    expect(frame?.data.buffer).not.toBe(analysis.lastData?.buffer);
    expect([analysis.watching('slow'), analysis.watching('fast')]).toEqual([1, 0]);
  });

  it('answers null when no frame comes within the task’s interval and 5 s', async () => {
    const asked = snapshots.frame('fast');
    vi.advanceTimersByTime(5_100);
    expect(await asked).toBeNull();
    expect(snapshots.waitMs('fast')).toBe(5_100);
  });

  it('takes a new frame at most once a second, and none older than the rate allows', async () => {
    const first = snapshots.frame('fast');
    analysis.analyse('fast', 1);
    expect(value(await first)).toBe(1);
    now = 500;
    analysis.analyse('fast', 2);
    expect(value(await snapshots.frame('fast'))).toBe(1);
    now = 1_000;
    analysis.analyse('fast', 3);
    expect(value(await snapshots.frame('fast'))).toBe(3);
    // 5.1 s later the kept frame is too old for a 10 fps task: the ask waits for the next one.
    now = 6_200;
    const late = snapshots.frame('fast');
    analysis.analyse('fast', 4);
    expect(value(await late)).toBe(4);
  });

  it('drops the kept frame when the stream is lost (a black fill frame is analysed)', async () => {
    const first = snapshots.frame('slow');
    analysis.analyse('slow', 1);
    await first;
    analysis.analyse('slow', null);
    const asked = snapshots.frame('slow');
    vi.advanceTimersByTime(15_000);
    expect(await asked).toBeNull();
  });

  it('stops keeping frames a minute after the last ask, and when the task closes', async () => {
    for (const taskId of ['slow', 'fast']) {
      const asked = snapshots.frame(taskId);
      analysis.analyse(taskId, 1);
      await asked;
    }
    expect([analysis.watching('slow'), analysis.watching('fast')]).toEqual([1, 1]);
    now = 61_000;
    analysis.analyse('slow', 2);
    snapshots.release('fast');
    expect([analysis.watching('slow'), analysis.watching('fast')]).toEqual([0, 0]);
    // Asked again: nothing was kept, so it waits for the next frame.
    const asked = snapshots.frame('slow');
    analysis.analyse('slow', 3);
    expect(value(await asked)).toBe(3);
  });
});
