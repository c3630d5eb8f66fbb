import { spawn } from 'node:child_process';
import type { SourceUrl } from './source-url';
import { protocolWhitelist } from './source-url';

export interface ProbeResult {
  width: number;
  height: number;
}

const STDERR_TAIL = 2000;

/**
 * Opens a source with ffmpeg and decodes its first video frame, which proves the stream is really
 * playable (not just reachable). Resolves with the frame size; rejects with ffmpeg's last words.
 * The process is killed on timeout or abort, so no ffmpeg outlives the call.
 */
export function probeFirstFrame(
  ffmpeg: string,
  source: SourceUrl,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const args = [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-protocol_whitelist',
    protocolWhitelist(source.kind),
  ];
  if (source.kind === 'rtsp') args.push('-rtsp_transport', 'tcp');
  // Network reads give up on their own too, in microseconds, so a dead server cannot hang ffmpeg.
  if (source.kind !== 'file') args.push('-rw_timeout', String(timeoutMs * 1000));
  args.push('-i', source.input, '-map', '0:v:0', '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'ppm', '-');

  return new Promise((resolve, reject) => {
    const child = spawn(ffmpeg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = Buffer.alloc(0);
    let stderr = '';
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (child.exitCode === null) child.kill('SIGKILL');
      outcome();
    };
    const onAbort = () => finish(() => reject(new Error('probe aborted')));
    const timer = setTimeout(
      () => finish(() => reject(new Error(`no video frame within ${Math.round(timeoutMs / 1000)} s`))),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort);

    child.stdout.on('data', (chunk: Buffer) => {
      stdout = Buffer.concat([stdout, chunk]);
      const size = ppmSize(stdout);
      if (size) finish(() => resolve(size));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL);
    });
    child.on('error', (error) => finish(() => reject(error)));
    child.on('close', (code) => {
      const size = ppmSize(stdout);
      finish(() =>
        size ? resolve(size) : reject(new Error(lastLine(stderr) || `ffmpeg exited with code ${code}`)),
      );
    });
  });
}

/** Width and height from a PPM header ("P6 <w> <h> <max>"), once the header is complete. */
function ppmSize(data: Buffer): ProbeResult | null {
  const header = data.subarray(0, 64).toString('latin1');
  const match = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(header);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : null;
}

const lastLine = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1) ?? '';
