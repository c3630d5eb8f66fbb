import type { ChildProcess } from 'node:child_process';

/** Stops a child process (SIGTERM unless told) and waits for it to exit; nothing to do once it has. */
export async function terminate(
  child: ChildProcess | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((done) => {
    child.once('exit', () => done());
    child.kill(signal);
  });
}
