import { closeSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { segmentListOf } from './segment-output';

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
  /** The buffer's bytes at most: past them the oldest segments go first. */
  maxBytes: number;
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
  /** Per run: how far its list has been read, and the part of a line not yet ended. */
  private readonly lists = new Map<number, { offset: number; partial: string }>();
  private readonly now: () => number;

  constructor(
    readonly dir: string,
    private readonly options: SegmentRingOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Starts reading the list of a new ffmpeg run; the runs before it have ended. */
  follow(run: number): void {
    this.lists.set(run, { offset: 0, partial: '' });
  }

  /** Reads what the lists gained, then removes what is past the bounds. */
  poll(): void {
    const seenAt = this.now();
    for (const [run, list] of this.lists) this.read(run, list, seenAt);
    this.prune(seenAt);
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

  private read(run: number, list: { offset: number; partial: string }, seenAt: number): void {
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
        for (const line of lines) this.add(run, line.trim(), seenAt);
      }
    } finally {
      closeSync(fd);
    }
  }

  private add(run: number, line: string, seenAt: number): void {
    const match = LIST_LINE.exec(line);
    if (!match) return;
    const file = join(this.dir, match[1] as string);
    const durationMs = (Number(match[3]) - Number(match[2])) * 1000;
    let bytes: number;
    try {
      bytes = statSync(file).size;
    } catch {
      return;
    }
    this.segments.push({ run, file, startAt: seenAt - durationMs, endAt: seenAt, bytes });
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
    const latest = Math.max(...this.lists.keys());
    for (const run of this.lists.keys()) {
      if (run === latest || this.segments.some((segment) => segment.run === run)) continue;
      this.lists.delete(run);
      for (const name of readdirSync(this.dir))
        if (name === `${run}.csv` || name.startsWith(`${run}-`))
          rmSync(join(this.dir, name), { force: true });
    }
  }
}
