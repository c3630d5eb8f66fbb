import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { findFfmpeg } from '../../engine/media/ffmpeg';
import { spawnOwned } from '../../engine/media/owned-child';
import { terminate } from './child';
import { eventually } from './eventually';
import { accepts } from './local-server';
import { freePort } from './rtmp-source';

/** A camera on a real RTSP server: what it serves, and how to take it down. */
export interface RtspCamera {
  url: string;
  stop(): Promise<void>;
}

/**
 * Debian's rtsp-server-perl with ffmpeg publishing `file` to it in real time by copying its packets
 * (looping). The server sends RTP over UDP only: readers must use UDP (or fall back to it).
 */
export async function startRtspCamera(file: string): Promise<RtspCamera> {
  const clientPort = await freePort();
  const sourcePort = await freePort();
  // Owned: a test run that dies leaves no server or publisher behind (they would hold UDP ports).
  const server = spawnOwned(
    'rtsp-server-perl',
    [
      ...['--clientport', String(clientPort), '--serverport', String(sourcePort)],
      ...['--rtp_start_port', String(20_000 + (clientPort % 20_000)), '--loglevel', '1'],
    ],
    { stdio: 'ignore' },
  );
  const url = `rtsp://127.0.0.1:${clientPort}/camera`;
  let publisher: ChildProcess | undefined;
  const stop = async () => {
    await terminate(publisher, 'SIGKILL');
    await terminate(server, 'SIGKILL');
  };
  try {
    // A publisher that connects before the server listens gives up, and the camera is never there.
    await eventually('rtsp-server-perl to listen', () => accepts(sourcePort), 10_000, 50);
    publisher = spawnOwned(
      findFfmpeg(),
      [
        ...['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', file],
        ...['-c', 'copy', '-f', 'rtsp', `rtsp://127.0.0.1:${sourcePort}/camera`],
      ],
      { stdio: 'ignore' },
    );
    await eventually('the camera to be published', () => described(url), 15_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

/** Whether the RTSP server answers DESCRIBE for the URL with 200 (its publisher has announced it). */
export function described(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = connect(Number(port), hostname);
    socket.setTimeout(2_000, () => socket.destroy());
    socket.once('connect', () => socket.write(`DESCRIBE ${url} RTSP/1.0\r\nCSeq: 1\r\n\r\n`));
    socket.once('data', (chunk) => {
      socket.destroy();
      done(/^RTSP\/1\.0 200/.test(chunk.toString()));
    });
    socket.once('close', () => done(false));
    socket.once('error', () => done(false));
  });
}
