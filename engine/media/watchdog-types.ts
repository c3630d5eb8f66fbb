import type { EventEmitter } from 'node:events';
import type { Clock } from '../clock';
import type { Frame } from '../vision/types';
import type { PixelSize } from './analysis-size';
import type { FramePool } from './frame-pool';
import type {
  RecordError,
  RtspTransport,
  SourceExit,
  SourceFrame,
  SourceInfo,
  SourceProgress,
} from './frame-source';
import type { DecodePath, Hwaccel } from './hwaccel';
import type { ReconnectPolicy } from './reconnect-policy';
import type { SourceUrl } from './source-url';

/**
 * idle -> connecting -> running -> stalled -> reconnecting -> connecting -> ...; closed from any state.
 * 'stalled' is the short time a silent ffmpeg is being stopped.
 */
export type WatchdogState = 'idle' | 'connecting' | 'running' | 'stalled' | 'reconnecting' | 'closed';

export interface WatchdogFrame extends Frame {
  /**
   * The source's size, where every reported coordinate lies: the frame is that picture bounded to
   * the engine's analysis size a side (analysis-size.ts), or the picture itself.
   */
  source: PixelSize;
  /** True for the black frames that stand in for the stream while it is lost. */
  synthetic: boolean;
  /** Frames emitted since start(), real and black. */
  index: number;
  /** performance.now() when the frame was read or made. */
  receivedAt: number;
  /** Real frames: where the frame lies on the media's clock, on performance.now()'s scale (SourceFrame). */
  mediaAt?: number;
  /** Real frames: which ffmpeg's media clock mediaAt is on (SourceFrame). */
  mediaLine?: number;
  /** Gives the pooled buffer back (frame-pool.ts says who calls it). */
  release?: () => void;
}

export interface StreamWatchdogEvents {
  state: [state: WatchdogState, previous: WatchdogState];
  frame: [WatchdogFrame];
  lost: [{ reason: string }];
  restored: [SourceInfo];
}

/** How an ffmpeg for the stream is to read its source. */
export interface SourceMode {
  /** Every frame of the source, not only the analysis rate: while an AI video is encoded (4.10). */
  fullRate: boolean;
  /** Files only: where to start, in seconds, so that a rate switch continues instead of rewinding. */
  seekS: number;
  /** The stream's decode path now (hwaccel.ts): hardware until it fails, then software. */
  hwaccel: Hwaccel;
}

/** What the watchdog uses of an ffmpeg source; FrameSource is the real one, tests pass fakes. */
export interface WatchedSource {
  on(event: 'frame', listener: (frame: SourceFrame) => void): unknown;
  on(event: 'exit', listener: (exit: SourceExit) => void): unknown;
  on(event: 'software', listener: (why: string) => void): unknown;
  /** ffmpeg's count of the frames it decoded; a source that never says is measured by its frames. */
  on(event: 'progress', listener: (progress: SourceProgress) => void): unknown;
  start(): void;
  stop(): Promise<void>;
  readonly info: SourceInfo | null;
  readonly durationS: number | null;
  readonly stderrTail: string;
  readonly lastError: string;
  readonly refused: Error | null;
  /** Why its clip recording failed (FrameSource.recordError): not the source's fault. */
  readonly recordError?: RecordError | null;
}

export type FrameSourceFactory = (
  source: SourceUrl,
  transport: RtspTransport,
  mode: SourceMode,
) => WatchedSource;

export interface StreamWatchdogOptions {
  /** Makes each ffmpeg; the lead passes its ffmpeg path and output rate here. */
  createSource?: FrameSourceFactory;
  /** Runs the reconnect backoff; the engine passes its lifecycle clock. Default systemClock. */
  clock?: Clock;
  /**
   * Runs the timers that watch the frames themselves: start and connect timeouts, start retries,
   * stall detection, black frames, the rate switch's timeout. Default systemClock, the time the
   * frames come in: the engine's tests move its lifecycle clock by hours while real ffmpeg streams
   * run, and on that clock every running stream would stall. Tests of the watchdog pass a ManualClock.
   */
  streamClock?: Clock;
  /**
   * The engine's event-loop lateness (system/loop-lag.ts): time the loop was late is not counted as
   * a source's silence. Default: this process's.
   */
  loopLag?: { stolenMs(): number };
  /** A running stream is stalled after no frame for max(stallMinMs, stallFrames intervals). */
  stallMinMs?: number;
  stallFrames?: number;
  /** Reconnect backoff (reconnect-policy.ts): the first wait and the cap... */
  backoffFirstMs?: number;
  backoffMaxMs?: number;
  /** ...or a policy read at each wait (a task's, which may change while it runs); it wins over both. */
  reconnectPolicy?: () => ReconnectPolicy;
  /** A reconnect attempt that gives no frame within this is abandoned. Default 15 s. */
  connectTimeoutMs?: number;
  /** Where black frames take their buffers. Default: the engine's frame pool. */
  framePool?: FramePool;
  /** The stream's decode path. Default: software. */
  decoder?: DecodePath;
}

/**
 * What the analysis, the AI video and health use of a task's stream: a StreamWatchdog, or a
 * DualStream for a task that analyses its sub-stream (dual-stream.ts).
 */
export interface AnalysisStream extends EventEmitter<StreamWatchdogEvents> {
  start(timeoutMs?: number): Promise<SourceInfo>;
  close(): Promise<void>;
  setFullRate(on: boolean): Promise<void>;
  analysisRateChanged(): Promise<void>;
  reopen(): Promise<void>;
  readonly info: SourceInfo | null;
  readonly fps: number;
  readonly state: WatchdogState;
  readonly reconnects: number;
  readonly lastError: string;
  readonly fullRate: boolean;
  readonly rateSwitchFailure: string;
  readonly decoder: DecodePath;
  readonly overload: string | null;
}
