import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FrameSocket {
  /** The end to hand ffmpeg as its stdout; destroy this copy once the child has it. */
  childEnd: Socket;
  /** The engine's end, reading into the buffers `target` names. */
  ours: Socket;
}

export interface DirectReader {
  /** Where the next read goes. */
  target(): Uint8Array;
  /** `bytes` were just read into the last target. */
  read(bytes: number): void;
}

/**
 * A connected Unix socket pair for one ffmpeg's frames. A child's stdout pipe hands Node a fresh
 * buffer for every 64 KB read (200 MB/s at four 40 fps streams, each an external allocation the main
 * heap's GC has to answer); this socket's end reads in place, straight into the frame being filled.
 */
export async function openFrameSocket(reader: DirectReader): Promise<FrameSocket> {
  const path = join(tmpdir(), `vc-frames-${process.pid}-${randomBytes(6).toString('hex')}.sock`);
  const server = createServer();
  try {
    server.listen(path);
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const ours = connect({
      path,
      onread: {
        buffer: () => reader.target(),
        callback: (bytes: number) => {
          reader.read(bytes);
          return true;
        },
      },
    });
    try {
      const [[childEnd]] = await Promise.all([accepted, once(ours, 'connect')]);
      return { childEnd, ours };
    } catch (error) {
      ours.destroy();
      throw error;
    }
  } finally {
    // Both ends are connected (or failed): the name is no longer needed.
    server.close();
    rmSync(path, { force: true });
  }
}
