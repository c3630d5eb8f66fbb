/**
 * The engine process as Electron starts it (utilityProcess.fork), behind the EngineChild interface the
 * supervisor drives; the tests drive a child_process.fork behind the same interface.
 */
import { utilityProcess } from 'electron';
import type { EngineChild } from './engine-supervisor';

/** Electron's utility process as the supervisor drives it. */
export function forkUtility(
  entry: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): EngineChild {
  const child = utilityProcess.fork(entry, args, {
    serviceName: 'Vision Console engine',
    stdio: 'inherit',
    env,
  });
  return {
    get pid() {
      return child.pid;
    },
    postMessage: (message) => child.postMessage(message),
    onMessage: (listener) => child.on('message', listener),
    // A utility process reports its exit code only; a signal shows as a code.
    onExit: (listener) => child.on('exit', (code) => listener({ code, signal: null })),
    kill: (signal) => {
      if (signal === 'SIGTERM' || child.pid === undefined) child.kill();
      else process.kill(child.pid, signal);
    },
  };
}
