import { EventEmitter } from 'node:events';
import type { FrameSourceEvents, RtspTransport, SourceInfo } from '../../engine/media/frame-source';
import type { SourceMode, WatchedSource } from '../../engine/media/stream-watchdog';

let mediaLines = 0;

/**
 * An ffmpeg source the test drives by hand: frames and exits come when the test says, so the
 * stream watchdog's timers can be moved on a ManualClock without a real process.
 */
export class FakeSource extends EventEmitter<FrameSourceEvents> implements WatchedSource {
  started = false;
  stopped = false;
  lastError = '';
  refused: Error | null = null;
  durationS: number | null = null;
  stderrTail = '';
  private frames = 0;
  /** Each stand-in for an ffmpeg has a media clock of its own, as each FrameSource does. */
  private readonly mediaLine = ++mediaLines;

  constructor(
    public info: SourceInfo | null,
    readonly transport: RtspTransport = 'tcp',
    readonly mode: SourceMode = { fullRate: false, seekS: 0, hwaccel: 'none' },
  ) {
    super();
  }

  start(): void {
    this.started = true;
  }

  stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.emit('exit', { code: null, signal: 'SIGTERM', stderrTail: '', stopped: true });
    }
    return Promise.resolve();
  }

  /** One frame of the source's size, read at `receivedAt` (performance.now() by default). */
  frame(receivedAt = performance.now()): void {
    const { width, height } = this.info ?? { width: 4, height: 2 };
    this.emit('frame', {
      data: new Uint8Array(width * height * 3).fill(7),
      width,
      height,
      source: this.info?.source ?? { width, height },
      index: this.frames++,
      receivedAt,
      mediaAt: receivedAt,
      mediaLine: this.mediaLine,
      release: () => {},
    });
  }

  /** ffmpeg gives up on its own, with this last error line. */
  fail(lastError: string, code = 1): void {
    this.lastError = lastError;
    this.emit('exit', { code, signal: null, stderrTail: lastError, stopped: false });
  }
}
