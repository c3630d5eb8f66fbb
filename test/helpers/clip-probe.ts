import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { findFfmpeg } from '../../engine/media/ffmpeg';

const FFMPEG = findFfmpeg();
const FFPROBE = FFMPEG.replace(/ffmpeg$/, 'ffprobe');

/** What ffprobe says of a clip's first video stream and its container. */
export interface ProbedClip {
  stream: { codec_name: string; profile: string; width: number; height: number; pix_fmt: string };
  /** Seconds, the container's. */
  duration: number;
  format: string;
  /** Pictures ffprobe decoded (it reads the whole file: a broken one fails here). */
  frames: number;
}

export function probeClip(file: string): ProbedClip {
  const out = JSON.parse(
    execFileSync(FFPROBE, [
      ...['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-of', 'json'],
      ...[
        '-show_entries',
        'stream=codec_name,profile,width,height,pix_fmt,nb_read_frames:format=duration,format_name',
      ],
      file,
    ]).toString(),
  ) as {
    streams: Array<ProbedClip['stream'] & { nb_read_frames: string }>;
    format: { duration: string; format_name: string };
  };
  const [first] = out.streams;
  if (!first) throw new Error(`${file} has no video stream`);
  const { nb_read_frames, ...stream } = first;
  return {
    stream,
    duration: Number(out.format.duration),
    format: out.format.format_name,
    frames: Number(nb_read_frames),
  };
}

/**
 * The MD5 of each decoded picture, in order. A copy decodes to the very pictures of the source; a
 * re-encode (lossy) would not. Packet bytes cannot be compared: MPEG-TS carries H.264 with start
 * codes and repeated parameter sets, MP4 with lengths.
 */
export function pictureHashes(file: string): string[] {
  return execFileSync(FFMPEG, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-i',
    file,
    '-map',
    '0:v:0',
    '-f',
    'framemd5',
    '-',
  ])
    .toString()
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(',').at(-1)?.trim() ?? '');
}

/** The presentation time of each packet of the first video stream, seconds, in file order. */
export function packetTimes(file: string): number[] {
  return execFileSync(FFPROBE, [
    ...['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time'],
    ...['-of', 'csv=p=0', file],
  ])
    .toString()
    .split('\n')
    .filter(Boolean)
    .map(Number);
}

/** Fast start: the MP4's index (moov) comes before its media (mdat), so a player starts before the end arrives. */
export function fastStart(file: string): boolean {
  const bytes = readFileSync(file);
  const moov = bytes.indexOf('moov');
  return moov > 0 && moov < bytes.indexOf('mdat');
}
