import { spawn } from 'node:child_process';
import { StderrTail, sourceInputArgs, videoStreamFormat } from './frame-source';
import { QUICK_START_ARGS } from './quick-start';
import { sourceRefusal } from './source-limits';
import type { SourceUrl } from './source-url';

export interface ProbeResult {
  width: number;
  height: number;
  /** ffmpeg's name of the video codec (h264, hevc, msmpeg4v3...); '' when it did not say. */
  codec: string;
  /** The decoded pixel format (yuv420p...); '' when it did not say. */
  pixelFormat: string;
}

export interface ProbeOptions {
  /** The source must give its first frame within this; network reads give up after it too. */
  timeoutMs: number;
  /** Frames of more pixels are refused (SourceTooLargeError). Default DEFAULT_MAX_SOURCE_PIXELS. */
  maxPixels?: number;
  signal?: AbortSignal;
}

// "P6 <w> <h> <maxval>" and its whitespace byte: all of the frame the probe keeps.
const PPM_HEADER_BYTES = 64;

/**
 * Opens a source with ffmpeg as a task would (the same whitelists and pixel cap) and decodes its
 * first video frame, which proves the stream is really playable (not just reachable). Resolves with
 * the frame size and the codec; rejects with why ffmpeg refused the source, else its last error. The
 * process is killed on timeout or abort, so no ffmpeg outlives the call.
 */
export function probeFirstFrame(
  ffmpeg: string,
  source: SourceUrl,
  options: ProbeOptions,
): Promise<ProbeResult> {
  const { timeoutMs, maxPixels, signal } = options;
  const args = [
    // Info level for the input description (codec); each line's level tells errors apart.
    ...['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'level+info'],
    // Read once, as fast as it comes: a file without a decodable frame fails at its end.
    ...QUICK_START_ARGS,
    ...sourceInputArgs(source, { ioTimeoutMs: timeoutMs, maxPixels }, false),
    ...['-map', '0:v:0', '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'ppm', '-'],
  ];

  return new Promise((resolve, reject) => {
    const child = spawn(ffmpeg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stderr = new StderrTail();
    let stream: { codec: string; pixelFormat: string } | null = null;
    let refusal: Error | null = null;
    let header = Buffer.alloc(0);
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (child.exitCode === null) child.kill('SIGKILL');
      outcome();
    };
    const found = () => {
      const size = ppmSize(header);
      return size ? { ...size, codec: stream?.codec ?? '', pixelFormat: stream?.pixelFormat ?? '' } : null;
    };
    const onAbort = () => finish(() => reject(new Error('probe aborted')));
    // Real time, not a clock: it bounds a real ffmpeg's read, and its caller waits on it.
    const timer = setTimeout(
      () => finish(() => reject(new Error(`no video frame within ${Math.round(timeoutMs / 1000)} s`))),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort);

    child.stdout.on('data', (chunk: Buffer) => {
      // The size is in the header; the pixels after it are dropped as they come.
      if (header.length < PPM_HEADER_BYTES)
        header = Buffer.concat([header, chunk.subarray(0, PPM_HEADER_BYTES - header.length)]);
      const result = found();
      if (result) finish(() => resolve(result));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      for (const line of stderr.push(chunk)) {
        stream ??= videoStreamFormat(line);
        refusal ??= sourceRefusal(line);
      }
    });
    child.on('error', (error) => finish(() => reject(error)));
    child.on('close', (code) => {
      stderr.end();
      const result = found();
      finish(() =>
        result
          ? resolve(result)
          : reject(
              refusal ?? new Error(stderr.lastError || stderr.lastLine || `ffmpeg exited with code ${code}`),
            ),
      );
    });
  });
}

/** Width and height from a PPM header ("P6 <w> <h> <max>"), once the header is complete. */
function ppmSize(data: Buffer): { width: number; height: number } | null {
  const match = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(data.toString('latin1'));
  return match ? { width: Number(match[1]), height: Number(match[2]) } : null;
}
