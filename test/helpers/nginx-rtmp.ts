import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFfmpeg } from '../../engine/media/ffmpeg';
import { spawnOwned } from '../../engine/media/owned-child';
import { LocalServer } from './local-server';
import { encodedFixture, freePort } from './rtmp-source';

const NGINX = '/usr/sbin/nginx';
const RTMP_MODULE = '/usr/lib/nginx/modules/ngx_rtmp_module.so';

/**
 * A real RTMP server: Debian's nginx with libnginx-mod-rtmp, in the foreground as one process, with
 * its own configuration, logs and pid file in a temp folder and a free loopback port. Any number of
 * clients may publish (a name at a time) and play. Throws when nginx or the module is missing: the
 * push tests must fail, not skip (CI installs libnginx-mod-rtmp).
 */
export class NginxRtmp extends LocalServer {
  /** `connections`: the most clients at once, publishers and players together. */
  static async start(connections = 64): Promise<NginxRtmp> {
    for (const file of [NGINX, RTMP_MODULE]) {
      if (!existsSync(file)) throw new Error(`${file} is missing: apt-get install nginx libnginx-mod-rtmp`);
    }
    const server = new NginxRtmp(mkdtempSync(join(tmpdir(), 'vc-nginx-rtmp-')), await freePort());
    writeFileSync(
      join(server.dir, 'nginx.conf'),
      [
        `load_module ${RTMP_MODULE};`,
        'daemon off;',
        'master_process off;',
        'worker_processes 1;',
        `pid ${join(server.dir, 'nginx.pid')};`,
        `error_log ${join(server.dir, 'error.log')} info;`,
        `events { worker_connections ${connections}; }`,
        `rtmp { server { listen 127.0.0.1:${server.port}; application live { live on; } } }`,
      ].join('\n'),
    );
    await server.run();
    return server;
  }

  /** The URL to publish to or play from. */
  url(name: string): string {
    return `rtmp://127.0.0.1:${this.port}/live/${name}`;
  }

  /** nginx's own log: who connected, published and played. */
  get log(): string {
    try {
      return readFileSync(join(this.dir, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  }

  protected spawnServer(): ChildProcess {
    // Owned: a test run that dies leaves no server behind.
    return spawnOwned(
      NGINX,
      ['-p', this.dir, '-c', join(this.dir, 'nginx.conf'), '-e', join(this.dir, 'error.log')],
      { stdio: 'ignore' },
    );
  }
}

/**
 * ffmpeg publishing the first `frames` fixture frames to the RTMP server in real time, looping: its
 * timestamps go on from one round to the next, and start over only when the publisher itself does.
 */
export function publishLooping(server: NginxRtmp, name: string, frames: number): ChildProcess {
  return spawn(
    findFfmpeg(),
    [
      ...['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1'],
      ...['-i', encodedFixture(frames), '-c', 'copy', '-f', 'flv', server.url(name)],
    ],
    { stdio: 'ignore' },
  );
}
