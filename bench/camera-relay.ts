import { type ChildProcess, spawn } from 'node:child_process';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { terminate } from '../test/helpers/child';
import { NginxRtmp } from '../test/helpers/nginx-rtmp';

/**
 * Cameras that serve any number of clients, as real ones do: one nginx-rtmp, to which each camera
 * file is published in real time, looping. A task with a sub-stream opens its main stream more than
 * once (a clip recorder beside what checks it), which an RtmpSource (ffmpeg listening for one client)
 * cannot serve; and many tasks can play one published stream, so that a bench of 30 cameras does
 * not spend a core of its own machine on 60 publishers.
 */
export class CameraRelay {
  private readonly publishers: ChildProcess[] = [];

  private constructor(private readonly server: NginxRtmp) {}

  /** `clients`: the most tasks' streams played at once (a sub-stream task plays its main stream twice). */
  static async start(clients: number): Promise<CameraRelay> {
    return new CameraRelay(await NginxRtmp.start(64 + 4 * clients));
  }

  /**
   * Publishes `file` as stream `name` in real time, looping from its start; the URL to play. Never
   * from a point into it: ffmpeg then loops from that point, skipping what comes before, and sends
   * a burst of seconds at every loop (measured: 5x the rate for a second). Streams that should show
   * the loop at different points are started at different times.
   */
  publish(name: string, file: string): string {
    const url = this.server.url(name);
    this.publishers.push(
      spawn(
        findFfmpeg(),
        [
          ...['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1'],
          ...['-i', file, '-c', 'copy', '-f', 'flv', url],
        ],
        { stdio: 'ignore' },
      ),
    );
    return url;
  }

  async stop(): Promise<void> {
    await Promise.all(this.publishers.map((publisher) => terminate(publisher, 'SIGKILL')));
    await this.server.dispose();
  }
}
