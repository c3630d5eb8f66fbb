import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

export type SourceKind = 'rtsp' | 'rtmp' | 'http' | 'file';

export interface SourceUrl {
  kind: SourceKind;
  /** What ffmpeg is given: the URL, or a plain path for local files. */
  input: string;
}

const NETWORK_SCHEMES: Record<string, SourceKind> = {
  'rtsp:': 'rtsp',
  'rtsps:': 'rtsp',
  'rtmp:': 'rtmp',
  'rtmps:': 'rtmp',
  'http:': 'http',
  'https:': 'http',
};

/** The task fields that name a source: the main stream, and its sub-stream for analysis (issue 36). */
export type SourceField = 'video_url' | 'analysis_url';

/**
 * Parses a task's video_url or analysis_url (api-decisions.md: rtsp, rtmp, http(s), file:// or an
 * absolute path); errors name `field`. Anything else, such as ffmpeg's own pseudo-protocols
 * (concat:, subfile:, pipe:), is refused.
 */
export function parseSourceUrl(
  videoUrl: string,
  field: SourceField = 'video_url',
): SourceUrl | { error: string } {
  if (isAbsolute(videoUrl) && !videoUrl.includes('\0')) return { kind: 'file', input: videoUrl };
  let url: URL;
  try {
    url = new URL(videoUrl);
  } catch {
    return {
      error: `${field}: must be an rtsp://, rtmp://, http(s)://, file:// URL or an absolute file path`,
    };
  }
  if (url.protocol === 'file:') {
    if (url.host !== '' && url.host !== 'localhost')
      return { error: `${field}: file:// URLs must name a local file` };
    return { kind: 'file', input: fileURLToPath(url) };
  }
  const kind = NETWORK_SCHEMES[url.protocol];
  if (!kind) return { error: `${field}: the scheme "${url.protocol.slice(0, -1)}" is not supported` };
  if (!url.hostname) return { error: `${field}: the URL has no host` };
  return { kind, input: videoUrl };
}

/**
 * Protocols ffmpeg may open for a source. A network source never reaches local files (an HLS
 * playlist could otherwise point ffmpeg at file:///etc/...), and a file source never the network.
 */
export function protocolWhitelist(kind: SourceKind): string {
  return kind === 'file'
    ? 'file'
    : 'http,https,tcp,tls,crypto,rtp,rtsp,rtsps,udp,rtmp,rtmps,rtmpt,rtmpts,httpproxy';
}

/**
 * Video containers and elementary video streams: what a camera or a recording is. ffmpeg would
 * otherwise pick any of its demuxers by a file's content or name, among them text renderers (tty for
 * .nfo .asc .ans .diz .art .vt, bin, xbin), image2 (which reads .yuv or .gray files as raw pixels),
 * playlists and scripts that open further files (hls, concat): each would show a file's bytes as
 * video. A comma-named demuxer ("mov,mp4,m4a,3gp,3g2,mj2") matches when one of its names is listed.
 */
const VIDEO_FORMATS = [
  ...['mov', 'matroska', 'avi', 'flv', 'mpegts', 'mpeg', 'asf', 'mxf', 'nut', 'ogg', 'dv'],
  ...['h264', 'hevc', 'm4v', 'mpegvideo', 'ivf', 'obu', 'mjpeg', 'jpeg_pipe', 'mpjpeg'],
];

/**
 * What network sources may use besides: RTSP, RTMP's live FLV, and HLS playlists, whose segments are
 * held to the same list, with the renditions a playlist may name beside its video (packed audio,
 * WebVTT subtitles; only the video is read, but ffmpeg opens them all or none).
 */
const STREAMING_FORMATS = ['rtsp', 'live_flv', 'hls', 'aac', 'mp3', 'ac3', 'eac3', 'webvtt'];

/**
 * Demuxers ffmpeg may use for a source. Network sources get a list too because an http:// URL can
 * name any server the engine reaches, an intranet page or a cloud metadata service: read by a text
 * demuxer, its answer would come back to the caller as a preview.
 */
export function formatWhitelist(kind: SourceKind): string {
  return (kind === 'file' ? VIDEO_FORMATS : [...VIDEO_FORMATS, ...STREAMING_FORMATS]).join(',');
}
