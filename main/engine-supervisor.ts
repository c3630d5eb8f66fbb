/**
 * Supervision of the engine process: start it, wait for its ready message, restart it with
 * exponential backoff when it dies, give up after too many quick crashes in a row, stop it cleanly.
 * No Electron import: the fork function and the timers are injected, so the policy is tested in
 * plain Node (with child_process.fork standing in for Electron's utilityProcess.fork).
 */
import {
  type EngineExit,
  type EngineMessage,
  type EngineState,
  type IssuedToken,
  type ParentMessage,
  parseEngineMessage,
} from '../engine/contract/engine-process';

/** Restart policy; times in milliseconds. */
export interface RestartPolicy {
  /** Wait before the first restart after a crash. */
  initialDelayMs: number;
  /** Each further quick crash multiplies the wait by this. */
  factor: number;
  /** The wait never grows past this. */
  maxDelayMs: number;
  /** A process that ran this long was healthy: its crash starts the backoff over. */
  healthyAfterMs: number;
  /** This many quick crashes in a row and the supervisor gives up (state failed). */
  maxQuickCrashes: number;
}

export const RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 1_000,
  factor: 2,
  maxDelayMs: 30_000,
  healthyAfterMs: 60_000,
  maxQuickCrashes: 5,
};

/** How long a start may take before the process is killed and counted as a crash (a first start installs the built-in package). */
export const READY_TIMEOUT_MS = 120_000;
/** After the stop message: how long the engine may take to stop its tasks before SIGTERM. */
export const STOP_GRACE_MS = 20_000;
/** After SIGTERM: how long before SIGKILL. */
export const KILL_GRACE_MS = 5_000;
/** How long a token request may wait for its answer. */
export const TOKEN_TIMEOUT_MS = 10_000;
/** How long a password reset may wait for its answer (one scrypt, which may queue behind logins). */
export const RESET_TIMEOUT_MS = 30_000;

/**
 * What to do after a crash: the quick crashes in a row so far (including this one) and either the
 * wait before the next try or giving up. A process that ran healthyAfterMs or longer resets the count.
 */
export function afterCrash(
  quickCrashes: number,
  ranMs: number,
  policy: RestartPolicy = RESTART_POLICY,
): { quickCrashes: number; delayMs: number | null } {
  const count = ranMs >= policy.healthyAfterMs ? 1 : quickCrashes + 1;
  if (count > policy.maxQuickCrashes) return { quickCrashes: count, delayMs: null };
  const delayMs = Math.min(policy.initialDelayMs * policy.factor ** (count - 1), policy.maxDelayMs);
  return { quickCrashes: count, delayMs };
}

/** The engine process as the supervisor drives it: Electron's UtilityProcess or a forked Node child. */
export interface EngineChild {
  readonly pid: number | undefined;
  postMessage(message: ParentMessage): void;
  onMessage(listener: (message: unknown) => void): void;
  onExit(listener: (exit: { code: number | null; signal: string | null }) => void): void;
  kill(signal: 'SIGTERM' | 'SIGKILL'): void;
}

/** Starts one engine process; `port` is the one to listen on (the last run's, to keep the URL). */
export type ForkEngine = (options: { port: number | undefined }) => EngineChild;

export interface Timers {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  now: Date.now,
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface SupervisorOptions {
  fork: ForkEngine;
  policy?: RestartPolicy;
  timers?: Timers;
  readyTimeoutMs?: number;
  stopGraceMs?: number;
  killGraceMs?: number;
  log?: (message: string) => void;
}

/** The engine's event feed as it arrives: the payloads are relayed to the console unchanged. */
export type FeedMessage = Extract<EngineMessage, { type: 'event' | 'delivery' }>;
/** The engine's answer to a request of main's. */
type EngineAnswer = Extract<EngineMessage, { type: 'token' | 'password-reset' }>;

interface Run {
  child: EngineChild;
  startedAt: number;
  ready: boolean;
  url: string | null;
  port: number | null;
  fatal: string | undefined;
  exited: Promise<void>;
  readyTimer: unknown;
}

export class EngineSupervisor {
  private readonly policy: RestartPolicy;
  private readonly timers: Timers;
  private readonly log: (message: string) => void;
  private current: EngineState = { state: 'stopped' };
  private run: Run | null = null;
  private retryTimer: unknown = null;
  private quickCrashes = 0;
  private restarts = 0;
  /** The restart try in the current run of quick crashes (0: the first start). */
  private attempt = 0;
  /** The port of the last run that got ready: a restart listens there again, so the URL holds. */
  private lastPort: number | undefined;
  private stopping = false;
  private nextRequestId = 1;
  /** Requests to the engine process waiting for the answer of their id (tokens, password resets). */
  private readonly pending = new Map<
    number,
    { resolve(answer: EngineAnswer): void; reject(error: Error): void; timer: unknown }
  >();
  private readonly stateListeners = new Set<(state: EngineState) => void>();
  private readonly feedListeners = new Set<(message: FeedMessage) => void>();

  constructor(private readonly options: SupervisorOptions) {
    this.policy = options.policy ?? RESTART_POLICY;
    this.timers = options.timers ?? realTimers;
    this.log = options.log ?? ((message) => console.warn(message));
  }

  get state(): EngineState {
    return this.current;
  }

  /** The running engine's URL, or null while none is ready. */
  get url(): string | null {
    return this.run?.ready ? this.run.url : null;
  }

  /** Calls the listener with every change of state; returns the unsubscribe. */
  onState(listener: (state: EngineState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Calls the listener with every event and delivery change the engine reports; returns the unsubscribe. */
  onFeed(listener: (message: FeedMessage) => void): () => void {
    this.feedListeners.add(listener);
    return () => this.feedListeners.delete(listener);
  }

  /** Starts the engine; resolves once it is running, rejects when the supervisor gives up. */
  start(): Promise<string> {
    this.stopping = false;
    this.quickCrashes = 0;
    this.attempt = 0;
    const running = this.whenRunning();
    this.spawn();
    return running;
  }

  /** Resolves with the URL the next time the engine is running; rejects if it fails or stops first. */
  whenRunning(): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.current.state === 'running') return resolve(this.current.url);
      const off = this.onState((state) => {
        if (state.state === 'running') resolve(state.url);
        else if (state.state === 'failed')
          reject(new Error(`the engine failed: ${describeExit(state.last_exit)}`));
        else if (state.state === 'stopped') reject(new Error('the engine was stopped'));
        else return;
        off();
      });
    });
  }

  /** A token for the local admin from the running engine (how main signs the console in). */
  async issueToken(): Promise<IssuedToken> {
    const answer = await this.ask((id) => ({ type: 'issue-token', id }), 'a token request', TOKEN_TIMEOUT_MS);
    if (answer.type !== 'token') throw new Error('the engine answered a token request with something else');
    return answer.token;
  }

  /**
   * Sets the admin's password without the current one (the desktop console's reset, confirmed by
   * the operator in main): the engine's answer as PUT /api/auth/password gives it.
   */
  async resetPassword(password: string): Promise<{ status: number; body: unknown }> {
    const answer = await this.ask(
      (id) => ({ type: 'reset-password', id, password }),
      'a password reset',
      RESET_TIMEOUT_MS,
    );
    if (answer.type !== 'password-reset')
      throw new Error('the engine answered a password reset with something else');
    return { status: answer.status, body: answer.body };
  }

  /** Sends a request to the running engine and waits for the answer of its id. */
  private ask(
    message: (id: number) => ParentMessage,
    what: string,
    timeoutMs: number,
  ): Promise<EngineAnswer> {
    const run = this.run;
    if (!run?.ready) return Promise.reject(new Error('the engine is not running'));
    const id = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      const timer = this.timers.setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the engine did not answer ${what}`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      run.child.postMessage(message(id));
    });
  }

  /** Stops the engine: the stop message, then SIGTERM, then SIGKILL, each after its grace period. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.retryTimer !== null) this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const run = this.run;
    if (run) {
      /** Whether the process exits within ms. */
      const within = async (ms: number) => {
        let timer: unknown;
        const late = new Promise<false>((done) => {
          timer = this.timers.setTimeout(() => done(false), ms);
        });
        const answer = await Promise.race([run.exited.then(() => true), late]);
        this.timers.clearTimeout(timer);
        return answer;
      };
      run.child.postMessage({ type: 'stop' });
      if (!(await within(this.options.stopGraceMs ?? STOP_GRACE_MS))) {
        this.log('the engine did not stop in time: SIGTERM');
        run.child.kill('SIGTERM');
        if (!(await within(this.options.killGraceMs ?? KILL_GRACE_MS))) {
          this.log('the engine did not stop after SIGTERM: SIGKILL');
          run.child.kill('SIGKILL');
          await run.exited;
        }
      }
    }
    this.setState({ state: 'stopped' });
  }

  private spawn(): void {
    this.retryTimer = null;
    this.setState({ state: 'starting', attempt: this.attempt });
    const child = this.options.fork({ port: this.lastPort });
    let exited!: () => void;
    const run: Run = {
      child,
      startedAt: this.timers.now(),
      ready: false,
      url: null,
      port: null,
      fatal: undefined,
      exited: new Promise((done) => {
        exited = done;
      }),
      readyTimer: null,
    };
    this.run = run;
    run.readyTimer = this.timers.setTimeout(() => {
      run.fatal = 'the engine did not get ready in time';
      this.log(run.fatal);
      child.kill('SIGKILL');
    }, this.options.readyTimeoutMs ?? READY_TIMEOUT_MS);
    child.onMessage((raw) => this.receive(run, raw));
    child.onExit((exit) => {
      exited();
      this.exited(run, { ...exit, ...(run.fatal !== undefined ? { reason: run.fatal } : {}) });
    });
  }

  private receive(run: Run, raw: unknown): void {
    const message = parseEngineMessage(raw);
    if (!message) {
      this.log('ignored a message from the engine that is not one');
      return;
    }
    switch (message.type) {
      case 'ready':
        this.timers.clearTimeout(run.readyTimer);
        Object.assign(run, { ready: true, url: message.url, port: message.port });
        this.setState({
          state: 'running',
          url: message.url,
          pid: run.child.pid ?? null,
          since: this.timers.now(),
          restarts: this.restarts,
        });
        return;
      case 'token':
      case 'password-reset': {
        const pending = this.pending.get(message.id);
        if (!pending) return;
        this.pending.delete(message.id);
        this.timers.clearTimeout(pending.timer);
        pending.resolve(message);
        return;
      }
      case 'fatal':
        run.fatal = message.message;
        return;
      default:
        for (const listener of this.feedListeners) listener(message);
    }
  }

  private exited(run: Run, exit: EngineExit): void {
    this.timers.clearTimeout(run.readyTimer);
    if (this.run === run) this.run = null;
    for (const [id, pending] of this.pending) {
      this.timers.clearTimeout(pending.timer);
      pending.reject(new Error('the engine stopped'));
      this.pending.delete(id);
    }
    if (this.stopping) return;
    // A run that got ready keeps its port for the next; one that failed to start gives it up.
    this.lastPort = run.ready && run.port !== null ? run.port : undefined;
    const ranMs = run.ready ? this.timers.now() - run.startedAt : 0;
    const decision = afterCrash(this.quickCrashes, ranMs, this.policy);
    this.quickCrashes = decision.quickCrashes;
    this.log(`the engine exited (${describeExit(exit)})`);
    if (decision.delayMs === null) {
      this.log(`the engine crashed ${decision.quickCrashes} times in a row: not restarting it`);
      this.setState({ state: 'failed', crashes: decision.quickCrashes, last_exit: exit });
      return;
    }
    this.attempt = decision.quickCrashes;
    this.restarts += 1;
    this.setState({
      state: 'restarting',
      attempt: this.attempt,
      next_try_at: this.timers.now() + decision.delayMs,
      last_exit: exit,
    });
    this.retryTimer = this.timers.setTimeout(() => this.spawn(), decision.delayMs);
  }

  private setState(state: EngineState): void {
    this.current = state;
    for (const listener of this.stateListeners) listener(state);
  }
}

/** "exit code 1: <reason>", "signal SIGKILL". */
export function describeExit(exit: EngineExit): string {
  const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
  return exit.reason ? `${how}: ${exit.reason}` : how;
}
