import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { terminate } from './child';

const CANDIDATES = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto'];

/**
 * A real mosquitto broker on a free loopback port, with persistence in its own folder so that
 * sessions and queued QoS 1 messages survive a restart. Throws when mosquitto is not installed:
 * the MQTT tests must fail, not skip, on a machine without it (CI installs the Debian package).
 */
export class Mosquitto {
  private child?: ChildProcess;
  private log = '';

  private constructor(
    private readonly binary: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<Mosquitto> {
    const binary = CANDIDATES.find((path) => existsSync(path));
    if (!binary)
      throw new Error(
        `mosquitto is not installed (looked in ${CANDIDATES.join(', ')}); apt-get install mosquitto`,
      );
    const dir = mkdtempSync(join(tmpdir(), 'vc-mosquitto-'));
    mkdirSync(join(dir, 'data'));
    const broker = new Mosquitto(binary, dir, await freePort());
    writeFileSync(
      join(dir, 'mosquitto.conf'),
      [
        // Started as root, mosquitto would switch to user "mosquitto", who cannot write our temp folder.
        `user ${userInfo().username}`,
        `listener ${broker.port} 127.0.0.1`,
        'allow_anonymous true',
        'persistence true',
        `persistence_location ${join(dir, 'data')}/`,
        // Saved on every change as well as at shutdown, so that even a hard kill keeps sessions.
        'autosave_interval 1',
        'autosave_on_changes true',
        'max_queued_messages 100000',
        'log_type error',
        'log_type warning',
        'log_type notice',
      ].join('\n'),
    );
    await broker.run();
    return broker;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  /** Stops the broker (SIGTERM: it saves its persistence) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await terminate(child);
  }

  /** Starts it again on the same port with the same persistence. */
  async restart(): Promise<void> {
    await this.stop();
    await this.run();
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async run(): Promise<void> {
    const child = spawn(this.binary, ['-c', join(this.dir, 'mosquitto.conf')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const collect = (chunk: Buffer) => {
      this.log += chunk.toString();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    // Ready once the port accepts connections; a broker that exits first fails with its log.
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.port))) {
      if (child.exitCode !== null) throw new Error(`mosquitto exited with ${child.exitCode}: ${this.log}`);
      if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${this.port}: ${this.log}`);
      await new Promise((done) => setTimeout(done, 50));
    }
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}
