import type { Clock, TimerHandle } from '../clock';
import { DEFAULT_FPS, type SourceInfo } from './frame-source';

/** What the rate switch needs of a source: its rate, to tell a live frame from a buffered burst. */
export interface RateSource {
  readonly info: SourceInfo | null;
  start(): void;
}

/** What a switch frame carries: when it was read (performance.now(), as every frame). */
export interface RateFrame {
  receivedAt: number;
}

/** The stream a rate switch serves. */
export interface RateSwitchHost<S extends RateSource, F extends RateFrame> {
  /** Makes a second source at the rate, from seekS (files), its events routed; may throw. */
  open(fullRate: boolean, seekS: number): S;
  /** The candidate runs in real time: it becomes the stream's source (the old one is the host's). */
  takeOver(source: S, fullRate: boolean, seekS: number, frame: F): void;
  /** Stops a source that feeds nothing. */
  stopAside(source: S): void;
}

export interface RateSwitchOptions {
  clock: Clock;
  /** A candidate that gives no frame within this is given up, with the reason given. */
  timeoutMs: number;
  timeoutReason: string;
}

interface Candidate<S> {
  source: S;
  fullRate: boolean;
  seekS: number;
  /** When the candidate's previous frame came; null before its first. */
  lastFrameAt: number | null;
  timer: TimerHandle;
  done: Promise<void>;
  finish: () => void;
}

/**
 * Switches a running stream between the analysis rate and every frame of the source (while an AI
 * video is encoded, 4.10) make-before-break: a second source opens and takes over once its frames
 * come in real time, so the stream is never lost on the way. A source that refuses a second client
 * keeps its rate, and `failure` says why.
 */
export class RateSwitch<S extends RateSource, F extends RateFrame> {
  private pending: Candidate<S> | null = null;
  private error = '';

  constructor(
    private readonly options: RateSwitchOptions,
    private readonly host: RateSwitchHost<S, F>,
  ) {}

  /** Why the last switch was given up; '' when it worked. */
  get failure(): string {
    return this.error;
  }

  /** The switch to this rate under way, to be joined; undefined when there is none. */
  underWay(fullRate: boolean): Promise<void> | undefined {
    return this.pending?.fullRate === fullRate ? this.pending.done : undefined;
  }

  /** Opens a candidate at the rate; resolves once it took over or was given up. */
  begin(fullRate: boolean, seekS: number): Promise<void> {
    this.abandon();
    let source: S;
    try {
      source = this.host.open(fullRate, seekS);
    } catch (error) {
      this.error = (error as Error).message;
      return Promise.resolve();
    }
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const { clock, timeoutMs, timeoutReason } = this.options;
    const pending: Candidate<S> = {
      source,
      fullRate,
      seekS,
      lastFrameAt: null,
      done,
      finish,
      timer: clock.setTimeout(() => this.fail(pending, timeoutReason), timeoutMs),
    };
    this.pending = pending;
    source.start();
    return done;
  }

  /** A frame of any of the stream's sources: the candidate's may complete the switch. */
  onFrame(source: S, frame: F): void {
    const pending = this.pending;
    if (pending?.source !== source || !this.caughtUp(pending, frame)) return;
    this.options.clock.clearTimeout(pending.timer);
    this.pending = null;
    this.error = '';
    this.host.takeOver(source, pending.fullRate, pending.seekS, frame);
    pending.finish();
  }

  /** A source exited: true when it was the candidate, and the switch is given up. */
  onExit(source: S, reason: string): boolean {
    const pending = this.pending;
    if (pending?.source !== source) return false;
    this.fail(pending, reason);
    return true;
  }

  /** Gives up the switch under way, if any, without a failure to report. */
  abandon(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    this.options.clock.clearTimeout(pending.timer);
    this.host.stopAside(pending.source);
    pending.finish();
  }

  private fail(pending: Candidate<S>, reason: string): void {
    if (this.pending !== pending) return;
    this.error = reason;
    this.abandon();
  }

  /**
   * Whether the candidate runs in real time yet. A network source first delivers what it buffered
   * while probing, seconds old and in a burst: taking over then would show the past. Frames that
   * come at least half a frame interval apart are live.
   */
  private caughtUp(pending: Candidate<S>, frame: F): boolean {
    const previous = pending.lastFrameAt;
    pending.lastFrameAt = frame.receivedAt;
    const interval = 1000 / (pending.source.info?.fps ?? DEFAULT_FPS);
    return previous !== null && frame.receivedAt - previous >= interval / 2;
  }
}
