import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { terminate } from './child';

/**
 * A real server process for tests (nginx-rtmp, mosquitto) on a loopback port, with its files in a
 * temp folder of its own: started, stopped, restarted on the same port, and cleaned up.
 */
export abstract class LocalServer {
  private child?: ChildProcess;

  protected constructor(
    protected readonly dir: string,
    readonly port: number,
  ) {}

  /** What the server has logged: the reason shown when it fails to start. */
  abstract get log(): string;

  /** Spawns the server process on this.port. */
  protected abstract spawnServer(): ChildProcess;

  /** Stops the server (every client is dropped) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await terminate(child);
  }

  /** Sends the server a signal: SIGKILL for a crash, SIGSTOP and SIGCONT for a freeze. */
  signal(name: NodeJS.Signals): void {
    this.child?.kill(name);
  }

  /** Kills the server as a crash would (SIGKILL, nothing saved) and waits for it to exit. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await terminate(child, 'SIGKILL');
  }

  /** Starts it again on the same port, with the same files. */
  async restart(): Promise<void> {
    await this.stop();
    await this.run();
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Ready once the port accepts connections; a server that exits first fails with its log. */
  protected async run(): Promise<void> {
    const child = this.spawnServer();
    this.child = child;
    const name = this.constructor.name;
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.port))) {
      if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${this.log}`);
      if (Date.now() > deadline) throw new Error(`${name} did not listen on ${this.port}: ${this.log}`);
      await new Promise((done) => setTimeout(done, 50));
    }
  }
}

/** Whether a loopback port accepts a TCP connection now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}
