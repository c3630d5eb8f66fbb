import { type ChildProcess, spawn } from 'node:child_process';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { terminate } from '../test/helpers/child';
import { NginxRtmp } from '../test/helpers/nginx-rtmp';

/**
 * A camera that serves any number of clients, as a real one does: its own nginx-rtmp with the file
 * published to it in real time, looping. A task with a sub-stream opens its main stream more than
 * once (a clip recorder beside what checks it), which an RtmpSource (ffmpeg listening for one
 * client) cannot serve.
 */
export class RelayedCamera {
  private publisher?: ChildProcess;

  private constructor(
    private readonly server: NginxRtmp,
    private readonly name: string,
    private readonly file: string,
  ) {}

  static async serving(name: string, file: string): Promise<RelayedCamera> {
    return new RelayedCamera(await NginxRtmp.start(), name, file);
  }

  get url(): string {
    return this.server.url(this.name);
  }

  start(): void {
    this.publisher = spawn(
      findFfmpeg(),
      [
        ...['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', this.file],
        ...['-c', 'copy', '-f', 'flv', this.url],
      ],
      { stdio: 'ignore' },
    );
  }

  async kill(): Promise<void> {
    await terminate(this.publisher, 'SIGKILL');
    await this.server.dispose();
  }
}
