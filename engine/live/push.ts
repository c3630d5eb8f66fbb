import type { AiVideoPushHealth } from '../contract/health';
import { SupervisedFfmpeg } from './supervised-ffmpeg';

/** Encoded bytes that may wait for a push before it counts as stuck (about 30 s at 2 Mbit/s). */
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
/** A target that accepts no connection or no data within this gives up; the backoff tries again. */
const IO_TIMEOUT_US = 5_000_000;

/**
 * The ffmpeg arguments of a push: the encoder's MPEG-TS on stdin, packets copied into FLV (no
 * decoding, no encoding) and sent to the RTMP server.
 */
function pushArgs(url: string): string[] {
  return [
    ...['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'level+info'],
    // The encoder sends a keyframe every second: more probing than that only delays going live.
    ...['-analyzeduration', '1500000', '-f', 'mpegts', '-i', 'pipe:0', '-map', '0:v', '-c', 'copy'],
    ...['-rw_timeout', String(IO_TIMEOUT_US), '-flvflags', 'no_duration_filesize', '-f', 'flv', url],
  ];
}

/**
 * One RTMP push of an AI video. The encoder's bytes are fanned out to it; when the server is
 * unreachable or drops the connection, only this ffmpeg is restarted (1 s doubling to 30 s), and
 * the bytes meanwhile are dropped: the encoder, the HLS output and the analysis never wait for it.
 */
export class RtmpPush {
  private readonly child: SupervisedFfmpeg;

  constructor(
    readonly url: string,
    ffmpeg: string,
  ) {
    this.child = new SupervisedFfmpeg({
      ffmpeg,
      stdin: true,
      args: () => pushArgs(url),
      // ffmpeg describes its output once the server took the connection and the stream header.
      liveWhen: /^Output #0, flv/,
    });
  }

  start(): void {
    this.child.start();
  }

  /** Encoded bytes for the server; dropped while the push is down. */
  write(chunk: Buffer): void {
    if (this.child.backlog > MAX_BACKLOG_BYTES) {
      this.child.kill('the RTMP server stopped taking data');
      return;
    }
    this.child.write(chunk);
  }

  /** The server (never the stream key, which is a secret) and how the push goes. */
  health(): AiVideoPushHealth {
    return { url: redacted(this.url), ffmpeg: this.child.health() };
  }

  stop(): Promise<void> {
    return this.child.stop();
  }
}

/** scheme://host:port/app of an RTMP URL: the last path part is usually the stream key. */
export function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    const app = parsed.pathname.split('/').filter(Boolean)[0];
    return `${parsed.protocol}//${parsed.host}${app ? `/${app}/…` : ''}`;
  } catch {
    return 'rtmp://…';
  }
}
