import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EngineState } from '../engine/contract/engine-process';
import { engineArgs } from '../main/engine-args';
import { EngineSupervisor, type ForkEngine, type RestartPolicy } from '../main/engine-supervisor';
import { forwardEngineEvents } from '../main/events';
import { PushChannels } from '../preload/channels';
import { ffmpegChildrenOf, isAlive } from './helpers/child';
import { callApi } from './helpers/engine-process';
import { eventually } from './helpers/eventually';
import { ADMIN_PASSWORD, TEST_MEDIA_DIRS, VIDEO } from './helpers/fixtures';

/**
 * The desktop's engine supervision (main/engine-supervisor.ts). Electron cannot launch on this
 * machine, so Node's child_process.fork stands in for Electron's utilityProcess.fork: the engine
 * process (engine/cli.ts, through tsx) speaks the same message protocol to either parent
 * (engine/contract/engine-process.ts); only how a message travels differs. The restart policy and
 * the state machine are tested on a fake clock in engine-supervisor-policy.test.ts.
 */

const ROOT = resolve(import.meta.dirname, '..');

// The real engine process, forked as main forks it (main/engine-args.ts gives the flags).

const work = mkdtempSync(join(tmpdir(), 'vc-supervisor-'));
const forked: ChildProcess[] = [];

/** ffmpeg processes a failed test could leave behind. */
const leftovers: number[] = [];

afterAll(async () => {
  for (const child of forked) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const pid of leftovers) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

/** child_process.fork in the role of utilityProcess.fork: the engine's sources through tsx. */
function nodeFork(dataDir: string, extraArgs: string[] = []): ForkEngine {
  return ({ port }) => {
    const args = engineArgs({
      // The fixture video is a file source: the tests' media folders are given as the operator's.
      settings: { host: '127.0.0.1', port: 0, dataDir, mediaDirs: [...TEST_MEDIA_DIRS] },
      port,
      appOrigin: 'app://console',
      consoleDir: null,
      builtinDir: join(ROOT, 'assets', 'builtin'),
    });
    const child = fork(join(ROOT, 'engine/cli.ts'), [...args, ...extraArgs], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, VC_ADMIN_PASSWORD: ADMIN_PASSWORD },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    forked.push(child);
    return {
      get pid() {
        return child.pid;
      },
      postMessage: (message) => child.send(message),
      onMessage: (listener) => child.on('message', listener),
      onExit: (listener) => child.on('exit', (code, signal) => listener({ code, signal })),
      kill: (signal) => child.kill(signal),
    };
  };
}

/** Quick enough for a test; the same rules as RESTART_POLICY. */
const TEST_POLICY: RestartPolicy = {
  initialDelayMs: 200,
  factor: 2,
  maxDelayMs: 1_000,
  healthyAfterMs: 60_000,
  maxQuickCrashes: 2,
};

interface TaskRow {
  task_id: string;
}

describe('engine supervisor (the real engine process)', () => {
  it('gets ready, signs in, relays a task event, survives kill -9 with its data and no ffmpeg left, and stops cleanly', async () => {
    const dataDir = join(work, 'data');
    const supervisor = new EngineSupervisor({ fork: nodeFork(dataDir), policy: TEST_POLICY, log: () => {} });
    const states: EngineState[] = [];
    supervisor.onState((state) => states.push(state));
    const pushed: Array<[string, unknown]> = [];
    forwardEngineEvents(supervisor, () => ({
      isDestroyed: () => false,
      webContents: { send: (channel, payload) => pushed.push([channel, payload]) },
    }));

    const url = await supervisor.start();
    const token = await supervisor.issueToken();
    expect(token.token_type).toBe('Bearer');
    const { task_id } = await callApi<TaskRow>(url, token.access_token, 'POST', '/api/task', {
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
    });
    // Through the engine process, the supervisor and main's relay to the window's push channel.
    const relayed = await eventually(
      'a motion event relayed to the window',
      () =>
        pushed.find(
          ([channel, body]) => channel === PushChannels.event && (body as TaskRow).task_id === task_id,
        ),
      120_000,
    );
    expect((relayed[1] as { app_id: string }).app_id).toBe('motion');

    const first = supervisor.state;
    if (first.state !== 'running' || first.pid === null)
      throw new Error(`not running: ${JSON.stringify(first)}`);
    const ffmpegs = await eventually('the task’s ffmpeg', () => {
      const pids = ffmpegChildrenOf(first.pid as number);
      return pids.length > 0 && pids;
    });
    // Frozen, they cannot die of a broken pipe when their engine goes (as one blocked on a stalled
    // camera would not): only the parent-death signal of engine/media/owned-child.ts ends them.
    for (const pid of ffmpegs) process.kill(pid, 'SIGSTOP');
    leftovers.push(...ffmpegs);
    states.length = 0;
    process.kill(first.pid, 'SIGKILL');

    await eventually(
      'the engine restarted and running again',
      () => supervisor.state.state === 'running' && supervisor.state.restarts === 1,
      120_000,
    );
    expect(states.map((state) => state.state)).toEqual(['restarting', 'starting', 'running']);
    expect(states[0]).toMatchObject({
      state: 'restarting',
      attempt: 1,
      last_exit: { code: null, signal: 'SIGKILL' },
    });
    // Same port again, so the console's URL and CSP hold.
    expect(supervisor.url).toBe(url);
    const second = supervisor.state;
    expect(second).toMatchObject({ state: 'running', restarts: 1 });
    expect((second as { pid: number }).pid).not.toBe(first.pid);
    await eventually('the killed engine’s ffmpeg gone', () => ffmpegs.every((pid) => !isAlive(pid)));

    const fresh = await supervisor.issueToken();
    const tasks = await callApi<TaskRow[]>(url, fresh.access_token, 'GET', '/api/tasks');
    expect(tasks.map((task) => task.task_id)).toEqual([task_id]);

    const running = supervisor.state as { pid: number };
    const resumed = await eventually('the resumed task’s ffmpeg', () => {
      const pids = ffmpegChildrenOf(running.pid);
      return pids.length > 0 && pids;
    });
    await supervisor.stop();
    expect(supervisor.state).toEqual({ state: 'stopped' });
    expect(isAlive(running.pid)).toBe(false);
    await eventually('no ffmpeg after the stop', () => resumed.every((pid) => !isAlive(pid)));
  }, 400_000);

  it("resets the admin password through the engine process's own channel, held to the password policy", async () => {
    const supervisor = new EngineSupervisor({
      fork: nodeFork(join(work, 'reset')),
      policy: TEST_POLICY,
      log: () => {},
    });
    const url = await supervisor.start();
    try {
      const before = (await supervisor.issueToken()).access_token;
      const login = (password: string) =>
        fetch(`${url}/api/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password }),
        }).then((answer) => answer.status);
      expect(await supervisor.resetPassword('00000000')).toEqual({
        status: 400,
        body: {
          code: 40001,
          msg: 'body.password: must have at least 4 different characters',
          field: 'password',
        },
      });
      expect(await login(ADMIN_PASSWORD)).toBe(200);
      expect(await supervisor.resetPassword('chosen-on-the-desktop')).toEqual({
        status: 200,
        body: { code: 0, msg: 'success', data: { username: 'admin' } },
      });
      expect(await login('chosen-on-the-desktop')).toBe(200);
      expect(await login(ADMIN_PASSWORD)).toBe(401);
      // The admin's tokens went with the old password, main's included.
      const tasks = await fetch(`${url}/api/tasks`, { headers: { authorization: `Bearer ${before}` } });
      expect(tasks.status).toBe(401);
    } finally {
      await supervisor.stop();
    }
  }, 120_000);

  it('gives up on an engine that cannot start, with its reason', async () => {
    const supervisor = new EngineSupervisor({
      fork: nodeFork(join(work, 'refused'), ['--analysis-fps', '500']),
      policy: TEST_POLICY,
      log: () => {},
    });
    await expect(supervisor.start()).rejects.toThrow(
      /the engine failed: exit code 1: --analysis-fps must be 0\.1\.\.60/,
    );
    expect(supervisor.state).toEqual({
      state: 'failed',
      crashes: 3,
      last_exit: { code: 1, signal: null, reason: '--analysis-fps must be 0.1..60, not 500' },
    });
  }, 200_000);
});
