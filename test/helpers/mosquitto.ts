import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { LocalServer } from './local-server';
import { freePort } from './rtmp-source';

const CANDIDATES = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto'];

/**
 * A real mosquitto broker on a free loopback port, with persistence in its own folder so that
 * sessions and queued QoS 1 messages survive a restart. Throws when mosquitto is not installed:
 * the MQTT tests must fail, not skip, on a machine without it (CI installs the Debian package).
 */
export class Mosquitto extends LocalServer {
  private output = '';

  private constructor(
    private readonly binary: string,
    dir: string,
    port: number,
  ) {
    super(dir, port);
  }

  /**
   * With `logPublishes`, its log names the client of every PUBLISH it receives (mosquitto's debug log).
   * With `users` (name to password), only they may connect (a password file made by mosquitto_passwd).
   */
  static async start(
    options: { logPublishes?: boolean; users?: Record<string, string> } = {},
  ): Promise<Mosquitto> {
    const binary = CANDIDATES.find((path) => existsSync(path));
    if (!binary)
      throw new Error(
        `mosquitto is not installed (looked in ${CANDIDATES.join(', ')}); apt-get install mosquitto`,
      );
    const dir = mkdtempSync(join(tmpdir(), 'vc-mosquitto-'));
    mkdirSync(join(dir, 'data'));
    const broker = new Mosquitto(binary, dir, await freePort());
    const passwords = join(dir, 'passwords');
    for (const [index, [user, password]] of Object.entries(options.users ?? {}).entries())
      execFileSync('mosquitto_passwd', [...(index === 0 ? ['-c'] : []), '-b', passwords, user, password]);
    writeFileSync(
      join(dir, 'mosquitto.conf'),
      [
        // Started as root, mosquitto would switch to user "mosquitto", who cannot write our temp folder.
        `user ${userInfo().username}`,
        `listener ${broker.port} 127.0.0.1`,
        ...(options.users
          ? ['allow_anonymous false', `password_file ${passwords}`]
          : ['allow_anonymous true']),
        'persistence true',
        `persistence_location ${join(dir, 'data')}/`,
        // Saved on every change as well as at shutdown, so that even a hard kill keeps sessions.
        'autosave_interval 1',
        'autosave_on_changes true',
        'max_queued_messages 100000',
        'log_type error',
        'log_type warning',
        'log_type notice',
        ...(options.logPublishes ? ['log_type debug'] : []),
      ].join('\n'),
    );
    await broker.run();
    return broker;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  get log(): string {
    return this.output;
  }

  /** Stopped with SIGTERM, the broker saves its persistence; a restart keeps its sessions. */
  protected spawnServer(): ChildProcess {
    const child = spawn(this.binary, ['-c', join(this.dir, 'mosquitto.conf')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    return child;
  }
}
