import { spawn } from 'node:child_process';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import type { Segment } from './segment-ring';

/** What cutting a clip took: its place on the wall clock, which may start later than asked. */
export interface CutClip {
  file: string;
  startAt: number;
  endAt: number;
}

/** A clip takes this long to cut at most: copying packets of a few dozen segments. */
const CUT_TIMEOUT_MS = 30_000;

/**
 * Joins whole segments into one fast-start MP4 (moov first, so a player starts before it has the
 * whole file) by copying their packets: the camera's own stream, never re-encoded. Written beside
 * `file` and renamed onto it, so a clip that is listed is whole even after a kill -9.
 */
export async function cutClip(ffmpeg: string, segments: readonly Segment[], file: string): Promise<CutClip> {
  const first = segments[0];
  const last = segments.at(-1);
  if (!first || !last) throw new Error('no segment to cut a clip from');
  const list = `${file}.ffconcat`;
  const partial = `${file}.partial`;
  // The concat demuxer's own syntax; paths are the ring's, quoted for it.
  const quoted = (path: string) => `'${path.replaceAll("'", "'\\''")}'`;
  writeFileSync(list, `ffconcat version 1.0\n${segments.map((s) => `file ${quoted(s.file)}\n`).join('')}`);
  try {
    await run(ffmpeg, [
      ...['-hide_banner', '-nostdin', '-loglevel', 'error'],
      ...['-f', 'concat', '-safe', '0', '-i', list],
      ...['-map', '0:v:0', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', '-y', partial],
    ]);
    renameSync(partial, file);
    return { file, startAt: first.startAt, endAt: last.endAt };
  } finally {
    rmSync(list, { force: true });
    rmSync(partial, { force: true });
  }
}

function run(command: string, args: readonly string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: CUT_TIMEOUT_MS });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2048);
    });
    child.once('error', fail);
    child.once('exit', (code, signal) =>
      code === 0 ? done() : fail(new Error(`ffmpeg cut a clip: ${signal ?? code}: ${stderr.trim()}`)),
    );
  });
}
