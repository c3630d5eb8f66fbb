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

/**
 * Parses a task's video_url (api-decisions.md: rtsp, rtmp, http(s), file:// or an absolute path).
 * Anything else, such as ffmpeg's own pseudo-protocols (concat:, subfile:, pipe:), is refused.
 */
export function parseSourceUrl(videoUrl: string): SourceUrl | { error: string } {
  if (isAbsolute(videoUrl) && !videoUrl.includes('\0')) return { kind: 'file', input: videoUrl };
  let url: URL;
  try {
    url = new URL(videoUrl);
  } catch {
    return {
      error: 'video_url: must be an rtsp://, rtmp://, http(s)://, file:// URL or an absolute file path',
    };
  }
  if (url.protocol === 'file:') {
    if (url.host !== '' && url.host !== 'localhost')
      return { error: 'video_url: file:// URLs must name a local file' };
    return { kind: 'file', input: fileURLToPath(url) };
  }
  const kind = NETWORK_SCHEMES[url.protocol];
  if (!kind) return { error: `video_url: the scheme "${url.protocol.slice(0, -1)}" is not supported` };
  if (!url.hostname) return { error: 'video_url: the URL has no host' };
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
