import type { AiVideoPushHealth } from '../contract/health';
import { SupervisedFfmpeg } from './supervised-ffmpeg';

/** Encoded bytes that may wait for a push before it counts as stuck (about 30 s at 2 Mbit/s). */
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
/** A target that accepts no connection or no data within this gives up; the backoff tries again. */
const IO_TIMEOUT_US = 5_000_000;
/** How long a push must stay live, without a restart, to count as up again after being down. */
const STABLE_MS = 10_000;
/** How often a push's state is looked at for its timeout. */
const WATCH_MS = 1_000;

export interface PushOptions {
  /** A push that has not been up for this long is ended (LiveLimits.pushTimeoutMs). */
  timeoutMs: number;
  /** Called once when the push ends on its own, with why. */
  onEnded(reason: string): void;
}

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
 * A push that is not up for the timeout (it never connects, or goes down and does not stay up for
 * 10 s again, as against a server that takes the connection and then stalls) is ended for good.
 */
export class RtmpPush {
  private readonly child: SupervisedFfmpeg;
  /** Since when the push has not been up (from its start); null while it is. Real time, as the process's. */
  private downSince: number | null = performance.now();
  private liveSince: number | null = null;
  private watch: NodeJS.Timeout | null = null;
  /** Why the push ended on its own; '' while it runs. */
  private endedFor = '';

  constructor(
    readonly url: string,
    ffmpeg: string,
    private readonly options: PushOptions,
  ) {
    this.child = new SupervisedFfmpeg({
      ffmpeg,
      stdin: true,
      args: () => pushArgs(url),
      // ffmpeg describes its output once the server took the connection and the stream header.
      liveWhen: /^Output #0, flv/,
    });
    this.child.on('live', () => {
      this.liveSince = performance.now();
    });
    // A new process: the one before died, whether or not a look at the state saw it down.
    this.child.on('spawned', () => {
      this.liveSince = null;
      this.downSince ??= performance.now();
    });
  }

  start(): void {
    this.child.start();
    this.watch = setInterval(() => this.look(), WATCH_MS);
  }

  /** The push ended on its own (see PushOptions.timeoutMs). */
  get ended(): boolean {
    return this.endedFor !== '';
  }

  /** Encoded bytes for the server; dropped while the push is down. */
  write(chunk: Buffer): void {
    if (this.ended) return;
    if (this.child.backlog > MAX_BACKLOG_BYTES) {
      this.child.kill('the RTMP server stopped taking data');
      return;
    }
    this.child.write(chunk);
  }

  /** The server (never the stream key, which is a secret) and how the push goes, or why it ended. */
  health(): AiVideoPushHealth {
    const ffmpeg = this.child.health();
    return {
      url: redacted(this.url),
      ffmpeg: this.ended ? { ...ffmpeg, last_error: this.endedFor } : ffmpeg,
    };
  }

  stop(): Promise<void> {
    if (this.watch) clearInterval(this.watch);
    return this.child.stop();
  }

  private look(): void {
    const now = performance.now();
    const live = this.child.state === 'live';
    if (!live) {
      this.liveSince = null;
      this.downSince ??= now;
    } else if (this.liveSince !== null && now - this.liveSince >= STABLE_MS) {
      this.downSince = null;
    }
    // A push live right now is given the chance to stay up; it ends the next time it is down.
    if (!live && this.downSince !== null && now - this.downSince >= this.options.timeoutMs) this.end();
  }

  private end(): void {
    // ffmpeg's errors name the whole URL: the stream key, a secret, is left out of the reason.
    const last = this.child.lastError.replaceAll(this.url, redacted(this.url));
    this.endedFor =
      `ended: not up for ${Math.round(this.options.timeoutMs / 1000)} s` +
      (last ? ` (last error: ${last})` : '');
    const reason = this.endedFor;
    void this.stop().then(() => this.options.onEnded(reason));
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
