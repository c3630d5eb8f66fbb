import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFfmpeg } from '../../engine/media/ffmpeg';
import { terminate } from './child';
import { VIDEO } from './fixtures';

/**
 * The fixture video as a live RTMP camera: ffmpeg in listen mode serves one client in real time,
 * looping.
 * The video is encoded to H.264 once (FLV needs it); the server only copies packets, so serving
 * costs almost no CPU and the pixels a client decodes are the same on every run.
 */

const ffmpeg = findFfmpeg();

/**
 * vtest.avi frames 0..frames-1 as H.264 in FLV, made once per machine and reused. A speed above 1
 * plays the same frames as a faster camera (speed x 10 fps), for saturation benchmarks.
 */
export function encodedFixture(frames: number, speed = 1): string {
  const dir = join(tmpdir(), 'vc-fixture-cache');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `vtest-${frames}-x${speed}.flv`);
  if (!existsSync(file)) {
    const partial = `${file}.partial.flv`;
    execFileSync(ffmpeg, [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-i',
      VIDEO,
      '-frames:v',
      String(frames),
      '-vf',
      `setpts=PTS/${speed}`,
      '-r',
      String(10 * speed),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-tune',
      'zerolatency',
      '-g',
      '10',
      '-pix_fmt',
      'yuv420p',
      '-an',
      partial,
    ]);
    execFileSync('mv', [partial, file]);
  }
  return file;
}

/**
 * `count` distinct free loopback ports: all held open until every one is taken, so that none is
 * handed out twice (ports taken one after another may repeat one just closed).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    await Promise.all(
      servers.map((server) => new Promise<void>((done) => server.listen(0, '127.0.0.1', done))),
    );
    return servers.map((server) => {
      const address = server.address();
      if (!address || typeof address === 'string') throw new Error('no port');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((done) => server.close(() => done()))));
  }
}

export async function freePort(): Promise<number> {
  return (await freePorts(1))[0] as number;
}

export class RtmpSource {
  private child?: ChildProcess;

  private constructor(
    readonly url: string,
    private readonly file: string,
  ) {}

  /** A server for the first `frames` frames of the fixture, at a unique URL that pgrep can find. */
  static async create(name: string, frames: number, speed = 1): Promise<RtmpSource> {
    const port = await freePort();
    return new RtmpSource(`rtmp://127.0.0.1:${port}/live/${name}`, encodedFixture(frames, speed));
  }

  /** A server for an encoded FLV file of the caller's (for example a 1080p camera made once). */
  static async serving(name: string, file: string): Promise<RtmpSource> {
    const port = await freePort();
    return new RtmpSource(`rtmp://127.0.0.1:${port}/live/${name}`, file);
  }

  start(): void {
    this.child = spawn(
      ffmpeg,
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-re',
        '-stream_loop',
        '-1',
        '-i',
        this.file,
        '-c',
        'copy',
        '-f',
        'flv',
        '-listen',
        '1',
        this.url,
      ],
      { stdio: 'ignore' },
    );
  }

  /** Dies like a camera that loses power: no goodbye to the client. */
  kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    return terminate(child, 'SIGKILL');
  }
}

/** Pids of the clients (not the server) whose command line contains the marker: the engine's ffmpeg. */
export function clientsOf(marker: string): number[] {
  let lines: string[];
  try {
    lines = execFileSync('pgrep', ['-af', marker], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    return [];
  }
  return lines
    .filter((line) => line.includes('ffmpeg') && !line.includes('-listen'))
    .map((line) => Number(line.split(' ')[0]));
}
