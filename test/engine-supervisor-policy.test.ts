import { describe, expect, it } from 'vitest';
import type { EngineState, ParentMessage } from '../engine/contract/engine-process';
import {
  afterCrash,
  type EngineChild,
  EngineSupervisor,
  type ForkEngine,
  RESTART_POLICY,
  type RestartPolicy,
  type Timers,
} from '../main/engine-supervisor';

/**
 * The engine supervisor's restart policy and state machine on a fake clock with fake processes: no
 * sleeps, no engine. The real engine process under supervision is in engine-supervisor.test.ts.
 */

class FakeTimers implements Timers {
  private at = 1_000_000;
  private pending: Array<{ due: number; run: () => void; id: number }> = [];
  private nextId = 1;

  now = () => this.at;
  setTimeout = (run: () => void, ms: number) => {
    const id = this.nextId++;
    this.pending.push({ due: this.at + ms, run, id });
    return id;
  };
  clearTimeout = (id: unknown) => {
    this.pending = this.pending.filter((timer) => timer.id !== id);
  };

  /** Moves the clock on, running every timer that falls due, in order. */
  advance(ms: number): void {
    const until = this.at + ms;
    for (;;) {
      const next = this.pending.filter((timer) => timer.due <= until).sort((a, b) => a.due - b.due)[0];
      if (!next) break;
      this.pending = this.pending.filter((timer) => timer !== next);
      this.at = next.due;
      next.run();
    }
    this.at = until;
  }
}

class FakeChild implements EngineChild {
  readonly posted: ParentMessage[] = [];
  readonly kills: string[] = [];
  private message: (message: unknown) => void = () => {};
  private exit: (exit: { code: number | null; signal: string | null }) => void = () => {};

  constructor(
    readonly pid: number,
    readonly port: number | undefined,
  ) {}
  postMessage(message: ParentMessage) {
    this.posted.push(message);
  }
  onMessage(listener: (message: unknown) => void) {
    this.message = listener;
  }
  onExit(listener: (exit: { code: number | null; signal: string | null }) => void) {
    this.exit = listener;
  }
  kill(signal: 'SIGTERM' | 'SIGKILL') {
    this.kills.push(signal);
  }
  send(message: unknown) {
    this.message(message);
  }
  ready(port = 4000) {
    this.send({ type: 'ready', url: `http://127.0.0.1:${port}`, port });
  }
  exits(code: number | null, signal: string | null = null) {
    this.exit({ code, signal });
  }
}

function supervised(policy: RestartPolicy = RESTART_POLICY) {
  const timers = new FakeTimers();
  const children: FakeChild[] = [];
  const fake: ForkEngine = ({ port }) => {
    const child = new FakeChild(100 + children.length, port);
    children.push(child);
    return child;
  };
  const supervisor = new EngineSupervisor({
    fork: fake,
    timers,
    policy,
    readyTimeoutMs: 60_000,
    stopGraceMs: 20_000,
    killGraceMs: 5_000,
    log: () => {},
  });
  const states: EngineState[] = [];
  supervisor.onState((state) => states.push(state));
  const last = () => children[children.length - 1] as FakeChild;
  return { timers, children, supervisor, states, last };
}

describe('restart policy', () => {
  const policy: RestartPolicy = {
    initialDelayMs: 1_000,
    factor: 2,
    maxDelayMs: 5_000,
    healthyAfterMs: 60_000,
    maxQuickCrashes: 5,
  };

  it('doubles the wait per quick crash up to the cap, gives up past the limit, and starts over after a healthy run', () => {
    const waits: Array<number | null> = [];
    let count = 0;
    for (let crash = 0; crash < 6; crash++) {
      const decision = afterCrash(count, 1_000, policy);
      count = decision.quickCrashes;
      waits.push(decision.delayMs);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 5_000, 5_000, null]);
    expect(afterCrash(4, 60_000, policy)).toEqual({ quickCrashes: 1, delayMs: 1_000 });
    expect(afterCrash(4, 59_999, policy)).toEqual({ quickCrashes: 5, delayMs: 5_000 });
  });
});

describe('engine supervisor (fake processes, fake clock)', () => {
  it('starts, restarts a crashed engine on its last port after the backoff, and reports each state', async () => {
    const { timers, children, supervisor, states, last } = supervised();
    const started = supervisor.start();
    last().ready(4001);
    await expect(started).resolves.toBe('http://127.0.0.1:4001');
    timers.advance(10_000);
    last().exits(null, 'SIGKILL');
    expect(supervisor.state).toEqual({
      state: 'restarting',
      attempt: 1,
      next_try_at: timers.now() + 1_000,
      last_exit: { code: null, signal: 'SIGKILL' },
    });
    timers.advance(999);
    expect(children).toHaveLength(1);
    timers.advance(1);
    expect(children.map((child) => child.port)).toEqual([undefined, 4001]);
    last().ready(4001);
    expect(states.map((state) => state.state)).toEqual([
      'starting',
      'running',
      'restarting',
      'starting',
      'running',
    ]);
    expect(supervisor.state).toEqual({
      state: 'running',
      url: 'http://127.0.0.1:4001',
      pid: 101,
      since: timers.now(),
      restarts: 1,
    });
  });

  it('gives up after too many quick crashes in a row, with the last exit and its reason', async () => {
    const policy = { ...RESTART_POLICY, maxQuickCrashes: 3 };
    const { timers, children, supervisor, states, last } = supervised(policy);
    const started = supervisor.start();
    const waits: number[] = [];
    for (let crash = 1; crash <= 4; crash++) {
      last().send({ type: 'fatal', message: 'database is locked' });
      last().exits(1);
      const state = supervisor.state;
      if (state.state === 'restarting') {
        waits.push(state.next_try_at - timers.now());
        timers.advance(state.next_try_at - timers.now());
      }
    }
    await expect(started).rejects.toThrow('the engine failed: exit code 1: database is locked');
    expect(waits).toEqual([1_000, 2_000, 4_000]);
    expect(children).toHaveLength(4);
    // A start that never got ready gives up its port: each try listens where the settings say.
    expect(children.map((child) => child.port)).toEqual([undefined, undefined, undefined, undefined]);
    expect(supervisor.state).toEqual({
      state: 'failed',
      crashes: 4,
      last_exit: { code: 1, signal: null, reason: 'database is locked' },
    });
    expect(states.filter((state) => state.state === 'starting')).toHaveLength(4);
  });

  it('kills a start that does not get ready in time and counts it as a crash', () => {
    const { timers, supervisor, last } = supervised();
    void supervisor.start().catch(() => {});
    timers.advance(60_000);
    expect(last().kills).toEqual(['SIGKILL']);
    last().exits(null, 'SIGKILL');
    expect(supervisor.state).toMatchObject({
      state: 'restarting',
      last_exit: { code: null, signal: 'SIGKILL', reason: 'the engine did not get ready in time' },
    });
  });

  it('answers token requests through the process, and fails them when the process dies', async () => {
    const { supervisor, last } = supervised();
    const started = supervisor.start();
    last().ready();
    await started;
    const first = supervisor.issueToken();
    const second = supervisor.issueToken();
    expect(last().posted).toEqual([
      { type: 'issue-token', id: 1 },
      { type: 'issue-token', id: 2 },
    ]);
    const token = { access_token: 'tok', token_type: 'Bearer', expires_in: 60 };
    last().send({ type: 'token', id: 1, token });
    await expect(first).resolves.toEqual(token);
    last().exits(null, 'SIGKILL');
    await expect(second).rejects.toThrow('the engine stopped');
    await expect(supervisor.issueToken()).rejects.toThrow('the engine is not running');
  });

  it('stops with the stop message, then SIGTERM, then SIGKILL, each after its grace period, and never restarts', async () => {
    const { timers, children, supervisor, last } = supervised();
    const started = supervisor.start();
    last().ready();
    await started;
    const child = last();
    const stopped = supervisor.stop();
    expect(child.posted).toEqual([{ type: 'stop' }]);
    await Promise.resolve();
    timers.advance(19_999);
    expect(child.kills).toEqual([]);
    timers.advance(1);
    await new Promise((done) => setImmediate(done));
    expect(child.kills).toEqual(['SIGTERM']);
    timers.advance(5_000);
    await new Promise((done) => setImmediate(done));
    expect(child.kills).toEqual(['SIGTERM', 'SIGKILL']);
    child.exits(null, 'SIGKILL');
    await stopped;
    timers.advance(120_000);
    expect(children).toHaveLength(1);
    expect(supervisor.state).toEqual({ state: 'stopped' });
  });

  it('ignores messages that are not of the protocol', async () => {
    const { supervisor, last } = supervised();
    const started = supervisor.start();
    last().send({ type: 'ready', url: 'http://127.0.0.1:1' });
    last().send('ready');
    expect(supervisor.state).toEqual({ state: 'starting', attempt: 0 });
    last().ready();
    await expect(started).resolves.toBe('http://127.0.0.1:4000');
  });
});
