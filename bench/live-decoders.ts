import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { cpuSeconds } from '../engine/system/process-stats';
import { RtmpSource } from '../test/helpers/rtmp-source';

/**
 * N cameras of the file, each served live over RTMP as the engine's tasks get them, each decoded in
 * software by ffmpeg on one thread to nothing: the least the engine's ffmpeg could do for the same
 * streams. A camera's frames arrive in real time, so its decoder wakes for each one with cold caches
 * and also reads RTMP: about a quarter more CPU than decoding the file flat out (decodeCost).
 */
export class LiveDecoders {
  private constructor(
    private readonly sources: RtmpSource[],
    private readonly decoders: ChildProcess[],
  ) {}

  /** `decoder`: ffmpeg's arguments for one camera's URL; by default one thread decoding to nothing. */
  static async start(
    file: string,
    cameras: number,
    name: string,
    decoder: (url: string) => string[] = decodeToNothing,
  ): Promise<LiveDecoders> {
    const sources = await Promise.all(
      Array.from({ length: cameras }, (_, i) => RtmpSource.serving(`${name}-${i}`, file)),
    );
    for (const source of sources) source.start();
    // The servers listen before the decoders dial them.
    await sleep(500);
    const decoders = sources.map((source) =>
      spawn(findFfmpeg(), ['-hide_banner', '-loglevel', 'error', ...decoder(source.url)], {
        stdio: 'ignore',
      }),
    );
    return new LiveDecoders(sources, decoders);
  }

  /** CPU seconds the decoders (not the servers) have taken so far. */
  cpuSeconds(): number {
    return this.decoders.reduce((sum, child) => sum + (child.pid ? cpuSeconds(child.pid) : 0), 0);
  }

  async stop(): Promise<void> {
    for (const child of this.decoders) child.kill('SIGKILL');
    await Promise.all(this.sources.map((source) => source.kill()));
  }
}

const decodeToNothing = (url: string) => ['-threads', '1', '-i', url, '-f', 'null', '-'];

/**
 * An RTMP client probes about 5 s and then catches up on a burst of buffered frames: a measure of
 * live decoding starts after that.
 */
export const LIVE_WARMUP_S = 8;

/**
 * Cores one live camera's decoding takes (or the decoder's work, when given), measured with one
 * camera per core decoding at once.
 */
export async function liveDecodeCost(
  file: string,
  cameras: number,
  windowS: number,
  decoder?: (url: string) => string[],
): Promise<number> {
  const decoders = await LiveDecoders.start(file, cameras, 'live-decode', decoder);
  try {
    await sleep(LIVE_WARMUP_S * 1000);
    const [before, startedAt] = [decoders.cpuSeconds(), Date.now()];
    await sleep(windowS * 1000);
    return (decoders.cpuSeconds() - before) / ((Date.now() - startedAt) / 1000) / cameras;
  } finally {
    await decoders.stop();
  }
}
