import type { FfmpegHealth } from '../contract/health';
import type { Frame } from '../vision/types';
import { FMP4_TEE_OUTPUT } from './fmp4';
import { hlsTeeOutput, nextSegmentNumber, waitForPlaylist } from './hls-files';
import { SupervisedFfmpeg } from './supervised-ffmpeg';

export interface EncoderSettings {
  ffmpeg: string;
  /** The stream's folder: ffmpeg runs there and writes the playlist and segments. */
  dir: string;
  /** Output size (made even for 4:2:0); frames of another size are scaled to it. */
  width: number;
  height: number;
  fps: number;
  bitrateKbps: number;
}

/** Frames allowed to wait for the encoder before new ones are dropped (it is falling behind). */
const MAX_QUEUED_FRAMES = 3;
const PLAYLIST_TIMEOUT_MS = 20_000;

/** A frame buffer (PPM header + pixels) written to the encoder, reused once every write of it is done. */
/** Where the encoder's byte streams go (its HLS goes to files). */
export interface EncoderOutputs {
  /** MPEG-TS, for the RTMP pushes. */
  mpegts(chunk: Buffer): void;
  /** Fragmented MP4, for the low-latency viewers. */
  fmp4(chunk: Buffer): void;
  /** A new encoder process: its streams start again from their headers. */
  restarted(): void;
}

interface PooledFrame {
  buffer: Buffer;
  headerLength: number;
  pending: number;
}

/**
 * The encoder's ffmpeg arguments: PPM frames on stdin (each carries its size, so a source that
 * changes resolution is scaled to the stream's size), H.264 with libx264 tuned for latency (no
 * B-frames, a keyframe every second for 1 s HLS segments, VBV-capped at the requested bitrate),
 * through the tee muxer to HLS in the stream's folder, MPEG-TS on stdout for the RTMP pushes, and
 * fragmented MP4, one fragment per frame, on fd 3 for the console's low-latency player.
 */
function encoderArgs(settings: EncoderSettings, startNumber: number): string[] {
  const { width, height, fps, bitrateKbps } = settings;
  const gop = String(Math.max(1, Math.round(fps)));
  return [
    ...['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'level+warning'],
    ...['-f', 'image2pipe', '-framerate', String(fps), '-c:v', 'ppm', '-i', 'pipe:0', '-map', '0:v'],
    ...['-vf', `scale=${even(width)}:${even(height)},format=yuv420p`],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency'],
    // The MP4 output's init segment needs the parameter sets (global header); the HLS and MPEG-TS
    // outputs keep them in-band before each keyframe too (repeat-headers).
    ...['-flags', '+global_header', '-x264-params', 'repeat-headers=1'],
    ...['-b:v', `${bitrateKbps}k`, '-maxrate', `${bitrateKbps}k`, '-bufsize', `${bitrateKbps}k`],
    ...['-g', gop, '-keyint_min', gop, '-sc_threshold', '0'],
    ...['-f', 'tee', `${hlsTeeOutput(startNumber)}|[f=mpegts]pipe:1|${FMP4_TEE_OUTPUT}`],
  ];
}

const even = (n: number) => Math.max(2, n - (n % 2));

/**
 * The one ffmpeg that encodes an AI video, fed composited frames by its owner. It is restarted with
 * backoff should it die, continuing the segment numbering; ready() resolves once the first playlist
 * is written. Encoded MPEG-TS comes out through onData for the RTMP pushes.
 */
export class LiveEncoder {
  private readonly child: SupervisedFfmpeg;
  private readonly pool: PooledFrame[] = [];
  private last: PooledFrame | null = null;
  readonly stats = { written: 0, dropped: 0 };

  constructor(
    readonly settings: EncoderSettings,
    outputs: EncoderOutputs,
  ) {
    this.child = new SupervisedFfmpeg({
      ffmpeg: settings.ffmpeg,
      cwd: settings.dir,
      stdin: true,
      stdout: true,
      extraOutput: true,
      args: async () => encoderArgs(settings, await nextSegmentNumber(settings.dir)),
      maxBufferedBytes: MAX_QUEUED_FRAMES * settings.width * settings.height * 3,
    });
    this.child.on('data', outputs.mpegts);
    this.child.on('extra', outputs.fmp4);
    this.child.on('spawned', outputs.restarted);
  }

  /** Starts ffmpeg; resolves once its first playlist is written, rejects if none comes in time. */
  async start(): Promise<void> {
    this.child.start();
    await waitForPlaylist(this.settings.dir, PLAYLIST_TIMEOUT_MS, () =>
      this.child.state === 'stopped' ? 'the encoder was stopped' : null,
    ).catch((error: Error) => {
      const detail = this.child.lastError;
      throw new Error(detail ? `${error.message}: ${detail}` : error.message);
    });
    this.child.markLive();
  }

  /**
   * Writes the frame with the drawings drawn on it (`draw` paints the pooled copy), `copies` times (the pacer's count).
   * False when the encoder is down or its backlog is full: the frame is dropped.
   */
  writeFrame(frame: Frame, draw: (pixels: Uint8Array) => void, copies: number): boolean {
    if (copies < 1) return true;
    const pooled = this.take(frame.width, frame.height);
    const pixels = pooled.buffer.subarray(pooled.headerLength);
    pixels.set(frame.data);
    draw(pixels);
    return this.send(pooled, copies);
  }

  /** Writes the last frame again (the source is silent and the video must keep its rate). */
  repeatLast(copies: number): boolean {
    const last = this.last;
    return last !== null && copies > 0 && this.send(last, copies);
  }

  health(): FfmpegHealth {
    return this.child.health();
  }

  stop(): Promise<void> {
    return this.child.stop();
  }

  private send(pooled: PooledFrame, copies: number): boolean {
    let sent = 0;
    for (let i = 0; i < copies; i++) {
      pooled.pending += 1;
      if (!this.child.write(pooled.buffer, () => this.release(pooled))) {
        pooled.pending -= 1;
        break;
      }
      sent += 1;
    }
    this.stats.written += sent;
    this.stats.dropped += copies - sent;
    if (sent > 0 && this.last !== pooled) {
      const previous = this.last;
      this.last = pooled;
      if (previous) this.release(previous, 0);
    } else if (sent === 0 && pooled !== this.last) {
      this.release(pooled, 0);
    }
    return sent === copies;
  }

  /** A buffer goes back to the pool once no write uses it and it is not the frame to repeat. */
  private release(pooled: PooledFrame, written = 1): void {
    pooled.pending -= written;
    if (pooled.pending > 0 || pooled === this.last) return;
    if (this.pool.length < MAX_QUEUED_FRAMES + 2) this.pool.push(pooled);
  }

  private take(width: number, height: number): PooledFrame {
    const header = `P6\n${width} ${height}\n255\n`;
    const size = header.length + width * height * 3;
    let pooled = this.pool.pop();
    // Buffers of another size (the source changed resolution) are left to the garbage collector.
    while (pooled && pooled.buffer.length !== size) pooled = this.pool.pop();
    if (!pooled || pooled.headerLength !== header.length) {
      pooled = { buffer: Buffer.allocUnsafe(size), headerLength: header.length, pending: 0 };
    }
    pooled.buffer.write(header, 0, 'latin1');
    return pooled;
  }
}
