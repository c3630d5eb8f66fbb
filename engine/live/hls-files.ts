import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** What ffmpeg's HLS muxer writes in a stream's folder (relative names: ffmpeg runs in the folder). */
export const PLAYLIST = 'index.m3u8';
const SEGMENT_TEMPLATE = 'seg%05d.ts';
/** The only names a client may ask for: no path ever reaches the file system from a request. */
const SERVABLE = /^(index\.m3u8|seg\d{5,12}\.ts)$/;
const SEGMENT_NUMBER = /^seg(\d{5,12})\.ts/;

/** Whether a file name is one of a stream's segments (not its playlist). */
export const isSegmentName = (name: unknown): boolean =>
  typeof name === 'string' && SERVABLE.test(name) && name !== PLAYLIST;

/**
 * HLS muxer options shared by the AI video and the preview: 1 s segments, a short live window, and
 * the sequence number to start at (a restarted ffmpeg continues it, so players see no reset).
 */
function hlsOptions(startNumber: number): Array<[string, string]> {
  return [
    ['hls_time', '1'],
    ['hls_list_size', '6'],
    // Segments just dropped from the playlist stay a little, for a player that read the previous one.
    ['hls_delete_threshold', '4'],
    ['hls_flags', 'delete_segments+temp_file+independent_segments+omit_endlist'],
    ['hls_segment_filename', SEGMENT_TEMPLATE],
    ['start_number', String(startNumber)],
  ];
}

/** The HLS output as one output of ffmpeg's tee muxer. */
export const hlsTeeOutput = (startNumber: number): string =>
  `[f=hls:${hlsOptions(startNumber)
    .map(([name, value]) => `${name}=${value}`)
    .join(':')}]${PLAYLIST}`;

/** An id for a stream: 96 random bits, so a stream's URL cannot be guessed (the token is checked too). */
export const newStreamId = (): string => randomBytes(12).toString('base64url');

/** The folder under the data dir where every live stream keeps its playlist and segments. */
export class HlsRoot {
  constructor(readonly dir: string) {}

  /** Removes what an engine that did not stop cleanly left behind. */
  async sweep(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
    await mkdir(this.dir, { recursive: true });
  }

  async create(name: string): Promise<string> {
    const dir = join(this.dir, name);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  async remove(dir: string): Promise<void> {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface HlsFile {
  body: Buffer | string;
  type: string;
}

/**
 * A playlist or segment of a stream's folder; null when the name is not one of them or the file is
 * gone (a segment deleted from the live window). With a segment token (for a ?token= request), the
 * playlist's segment URIs carry it: players resolve them against the playlist URL without its query.
 */
export async function readHlsFile(dir: string, name: string, segmentToken?: string): Promise<HlsFile | null> {
  if (!SERVABLE.test(name)) return null;
  let body: Buffer;
  try {
    body = await readFile(join(dir, name));
  } catch {
    return null;
  }
  if (name !== PLAYLIST) return { body, type: 'video/mp2t' };
  const text = body.toString('utf8');
  return {
    body: segmentToken ? withToken(text, segmentToken) : text,
    type: 'application/vnd.apple.mpegurl',
  };
}

/** Adds ?token= to every URI line of a playlist. */
export function withToken(playlist: string, token: string): string {
  const query = `?token=${encodeURIComponent(token)}`;
  return playlist
    .split('\n')
    .map((line) => (line.trim() === '' || line.startsWith('#') ? line : `${line.trimEnd()}${query}`))
    .join('\n');
}

/**
 * Resolves once the folder has a playlist (ffmpeg writes it with the first whole segment); rejects
 * after the timeout with what `failure` says went wrong, or at once when it says so.
 */
export async function waitForPlaylist(
  dir: string,
  timeoutMs: number,
  failure: () => string | null,
): Promise<void> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const exists = await stat(join(dir, PLAYLIST)).then(
      () => true,
      () => false,
    );
    if (exists) return;
    const failed = failure();
    if (failed !== null) throw new Error(failed);
    if (performance.now() > until)
      throw new Error(`no video segment within ${Math.round(timeoutMs / 1000)} s`);
    // Real time, not a clock: it waits on a file a real ffmpeg writes.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The number after the highest segment in the folder: a restarted ffmpeg continues the sequence. */
export async function nextSegmentNumber(dir: string): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let next = 0;
  for (const name of names) {
    const match = SEGMENT_NUMBER.exec(name);
    if (match) next = Math.max(next, Number(match[1]) + 1);
  }
  return next;
}
