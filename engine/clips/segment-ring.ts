import { closeSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { segmentListOf, segmentNameOf } from './segment-output';

/** A closed segment of a source's own stream, placed on the wall clock. */
export interface Segment {
  run: number;
  file: string;
  /** ms since the epoch: when its first and last packets arrived. */
  startAt: number;
  endAt: number;
  bytes: number;
}

export interface SegmentRingOptions {
  /** Segments that ended longer ago than this are removed. */
  keepMs: number;
  /** The buffer's bytes at most: past them the oldest segments go first, and the open one is too big. */
  maxBytes: number;
  /** The open segment has waited this long for a keyframe to close it at most. */
  maxOpenMs: number;
  now?: () => number;
}

/** A list line ffmpeg writes: "<file>,<start s>,<end s>"; the name has no comma (segment-output.ts). */
const LIST_LINE = /^([^,]+),(\d+(?:\.\d+)?),(\d+(?:\.\d+)?)$/;
/** A list is read this many bytes at a time; a line is ~40 bytes. */
const READ_CHUNK = 16 * 1024;

/**
 * The segments of one task's buffer (segment-output.ts), oldest first, bounded in time and bytes.
 * ffmpeg lists a segment as it closes, at the keyframe that starts the next one: a segment is placed
 * on the wall clock by when its line was read (its end, late by at most the poll period) and by its
 * duration on the stream's own clock (its start). Only this reads and removes the buffer's files.
 */
export class SegmentRing {
  private readonly segments: Segment[] = [];
  /** Per run: how far its list has been read, the part of a line not yet ended, the segments listed. */
  private readonly lists = new Map<number, RunList>();
  /** The latest run's segment being written: its number, and when it was first seen. */
  private open: { run: number; index: number; seenAt: number } | null = null;
  private readonly now: () => number;

  constructor(
    readonly dir: string,
    private readonly options: SegmentRingOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Starts reading the list of a new ffmpeg run; the runs before it have ended. */
  follow(run: number): void {
    this.lists.set(run, { offset: 0, partial: '', listed: 0 });
  }

  /** Reads what the lists gained, then removes what is past the bounds. */
  poll(): void {
    const seenAt = this.now();
    for (const [run, list] of this.lists) this.read(run, list, seenAt);
    this.prune(seenAt);
  }

  /**
   * Why the segment being written is past its bounds: its stream has no keyframe (or one so rarely)
   * that it grows without closing, and its file with it. Null while it is within them.
   */
  overgrown(): string | null {
    const run = this.latestRun();
    const list = this.lists.get(run);
    if (!list) return null;
    const index = list.listed;
    let bytes: number;
    try {
      bytes = statSync(join(this.dir, segmentNameOf(run, index))).size;
    } catch {
      return null; // Not begun: no packet since the last one closed (or since ffmpeg started).
    }
    const now = this.now();
    if (this.open?.run !== run || this.open.index !== index) this.open = { run, index, seenAt: now };
    const { maxBytes, maxOpenMs } = this.options;
    if (bytes > maxBytes) return `no keyframe in ${bytes} bytes of the stream (the bound is ${maxBytes})`;
    if (now - this.open.seenAt > maxOpenMs)
      return `no keyframe for ${Math.round((now - this.open.seenAt) / 1000)} s of the stream (the bound is ${maxOpenMs / 1000} s)`;
    return null;
  }

  /** Closed segments overlapping [from, to], oldest first. */
  between(from: number, to: number): Segment[] {
    return this.segments.filter((segment) => segment.startAt < to && segment.endAt > from);
  }

  /** Bytes the closed segments hold. */
  get bytes(): number {
    return this.segments.reduce((sum, segment) => sum + segment.bytes, 0);
  }

  /** Removes the buffer's files: the task has ended. */
  dispose(): void {
    this.segments.length = 0;
    this.lists.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private read(run: number, list: RunList, seenAt: number): void {
    let fd: number;
    try {
      fd = openSync(segmentListOf(this.dir, run), 'r');
    } catch {
      return; // No segment of this run has closed yet.
    }
    try {
      const chunk = Buffer.alloc(READ_CHUNK);
      for (;;) {
        const read = readSync(fd, chunk, 0, READ_CHUNK, list.offset);
        if (read === 0) break;
        list.offset += read;
        const lines = (list.partial + chunk.toString('utf8', 0, read)).split('\n');
        list.partial = lines.pop() ?? '';
        for (const line of lines) if (this.add(run, line.trim(), seenAt)) list.listed++;
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Keeps the segment a list line names; false for a line that names none. */
  private add(run: number, line: string, seenAt: number): boolean {
    const match = LIST_LINE.exec(line);
    if (!match) return false;
    const file = join(this.dir, match[1] as string);
    const durationMs = (Number(match[3]) - Number(match[2])) * 1000;
    let bytes: number;
    try {
      bytes = statSync(file).size;
    } catch {
      return true; // Listed but gone: it still counts, so that the open one is known.
    }
    // A run's segments follow each other on the stream: one read later than the one before it
    // (a late poll, a busy engine) starts where that one ended, so that no instant falls between.
    const previous = this.segments.at(-1);
    const startAt = Math.min(
      seenAt - durationMs,
      previous?.run === run ? previous.endAt : Number.POSITIVE_INFINITY,
    );
    this.segments.push({ run, file, startAt, endAt: seenAt, bytes });
    return true;
  }

  private prune(now: number): void {
    let bytes = this.bytes;
    while (this.segments.length > 0) {
      const oldest = this.segments[0] as Segment;
      if (oldest.endAt >= now - this.options.keepMs && bytes <= this.options.maxBytes) break;
      this.segments.shift();
      bytes -= oldest.bytes;
      rmSync(oldest.file, { force: true });
    }
    this.forgetEndedRuns();
  }

  /**
   * A run that has ended (a later one is followed) and has no segment left is forgotten with its
   * list and any segment it left unlisted (an ffmpeg killed before it could close its last one).
   */
  private forgetEndedRuns(): void {
    const latest = this.latestRun();
    for (const run of this.lists.keys()) {
      if (run === latest || this.segments.some((segment) => segment.run === run)) continue;
      this.lists.delete(run);
      for (const name of readdirSync(this.dir))
        if (name === `${run}.csv` || name.startsWith(`${run}-`))
          rmSync(join(this.dir, name), { force: true });
    }
  }

  /** The run now writing the buffer: the last one followed. */
  private latestRun(): number {
    return Math.max(...this.lists.keys());
  }
}

interface RunList {
  offset: number;
  partial: string;
  listed: number;
}
