import { spawn } from 'node:child_process';
import { createReadStream, renameSync, rmSync, writeFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { StderrTail, videoStreamFormat } from '../media/frame-source';
import type { Segment } from './segment-ring';

/** What cutting a clip took: its place on the wall clock, which may start later than asked, and its codec. */
export interface CutClip {
  file: string;
  startAt: number;
  endAt: number;
  /** The video codec as ffmpeg read it (the camera's own: it is copied); null if it did not say. */
  codec: string | null;
}

/** A clip takes this long to cut at most: copying packets of a few dozen segments. */
const CUT_TIMEOUT_MS = 30_000;

const OUTPUT_ARGS = ['-map', '0:v:0', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', '-y'];

/**
 * Joins whole segments into one fast-start MP4 (moov first, so a player starts before it has the
 * whole file) by copying their packets: the camera's own stream, never re-encoded. Written beside
 * `file` and renamed onto it, so a clip that is listed is whole even after a kill -9.
 *
 * Segments of one recorder run are one MPEG-TS stream cut at keyframes: their bytes are handed to
 * ffmpeg back to back, read as a single input. The concat demuxer, which probes every segment
 * (decoding its first frames), took six times the CPU for the same bytes out (0.49 against 0.08 s
 * for 20 s of 1080p25), and clips are cut in bursts when one crossing alarms several cameras. Runs
 * of a reconnected recorder start their timestamps afresh: the demuxer places each file after the
 * one before, where one stream read across the join repeats a frame's time, so a clip spanning runs
 * is cut that way still.
 */
export async function cutClip(ffmpeg: string, segments: readonly Segment[], file: string): Promise<CutClip> {
  const first = segments[0];
  const last = segments.at(-1);
  if (!first || !last) throw new Error('no segment to cut a clip from');
  const partial = `${file}.partial`;
  const oneRun = segments.every((segment) => segment.run === first.run);
  const list = `${file}.ffconcat`;
  try {
    let codec: string | null;
    if (oneRun) {
      codec = await run(ffmpeg, ['-f', 'mpegts', '-i', 'pipe:0', ...OUTPUT_ARGS, partial], segments);
    } else {
      // The concat demuxer's own syntax; paths are the ring's, quoted for it.
      const quoted = (path: string) => `'${path.replaceAll("'", "'\\''")}'`;
      writeFileSync(
        list,
        `ffconcat version 1.0\n${segments.map((s) => `file ${quoted(s.file)}\n`).join('')}`,
      );
      codec = await run(ffmpeg, ['-f', 'concat', '-safe', '0', '-i', list, ...OUTPUT_ARGS, partial]);
    }
    renameSync(partial, file);
    return { file, startAt: first.startAt, endAt: last.endAt, codec };
  } finally {
    rmSync(list, { force: true });
    rmSync(partial, { force: true });
  }
}

/** The segments' bytes, one file after another. */
async function* bytesOf(segments: readonly Segment[]): AsyncGenerator<Buffer> {
  for (const segment of segments) yield* createReadStream(segment.file);
}

/**
 * Runs one cut, with `segments` on its standard input when given: resolves with the input's video
 * codec from ffmpeg's description of it (so the clip needs no second ffmpeg to name it), rejects
 * with ffmpeg's error.
 */
function run(
  command: string,
  args: readonly string[],
  segments?: readonly Segment[],
): Promise<string | null> {
  return new Promise((done, fail) => {
    const child = spawn(
      command,
      ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'level+info', ...args],
      {
        stdio: ['pipe', 'ignore', 'pipe'],
        timeout: CUT_TIMEOUT_MS,
      },
    );
    const stderr = new StderrTail();
    let codec: string | null = null;
    child.stderr.on('data', (chunk: Buffer) => {
      for (const line of stderr.push(chunk)) codec ??= videoStreamFormat(line)?.codec ?? null;
    });
    // Writing fails once ffmpeg has ended, which its exit explains; a segment that cannot be read
    // (removed meanwhile) ends the input early, and the clip fails with that rather than come short.
    let readFailure: Error | null = null;
    pipeline(bytesOf(segments ?? []), child.stdin).catch((error: NodeJS.ErrnoException) => {
      if (error.syscall === 'open' || error.syscall === 'read') readFailure = error;
    });
    child.once('error', fail);
    child.once('close', (code, signal) => {
      stderr.end();
      if (readFailure) fail(readFailure);
      else if (code === 0) done(codec);
      else
        fail(
          new Error(`ffmpeg cut a clip: ${signal ?? code}: ${stderr.errors.join('; ') || stderr.lastLine}`),
        );
    });
  });
}
