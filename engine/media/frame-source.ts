import type { ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { type SegmentTarget, segmentOutputArgs } from '../clips/segment-output';
import { boundingScaleFilter, type PixelSize, sourceSizeOf } from './analysis-size';
import { findFfmpeg } from './ffmpeg';
import { type PooledFrame, PpmFrameReader } from './frame-reader';
import { type FrameSocket, openFrameSocket } from './frame-socket';
import { codecDecoding, type Hwaccel, hwaccelArgs, hwaccelRefusal } from './hwaccel';
import { spawnOwned } from './owned-child';
import { QUICK_START_ARGS } from './quick-start';
import { sourceLimitArgs, sourceRefusal } from './source-limits';
import { protocolWhitelist, type SourceUrl } from './source-url';

export type RtspTransport = 'tcp' | 'udp';

export interface FrameSourceOptions {
  /** The ffmpeg binary; findFfmpeg() by default. */
  ffmpeg?: string;
  /** RTSP only: how RTP is carried. Default 'tcp'. */
  transport?: RtspTransport;
  /** Network sources: ffmpeg gives up on a read or connect that takes longer. Default 10 s. */
  ioTimeoutMs?: number;
  /** Decoding on this hwaccel (hwaccel.ts); software by default. */
  hwaccel?: Hwaccel;
  /** Adds `-vf fps=<n>`: the caller passes it only when the source is faster than it wants. */
  outputFps?: number;
  /** Files only: start this many seconds in (a rate switch continues the picture instead of rewinding). */
  seekS?: number;
  /** Files only: play at this multiple of real time (ffmpeg's -readrate); default 1 (-re). */
  readRate?: number;
  /** Frames of more pixels are refused by ffmpeg's decoder. Default DEFAULT_MAX_SOURCE_PIXELS. */
  maxPixels?: number;
  /** Frames leave ffmpeg with at most this many pixels a side. Default MAX_FRAME_SIDE. */
  maxSide?: number;
  /** How long stop() waits after SIGTERM before SIGKILL. Default 1 s. */
  stopGraceMs?: number;
  /**
   * Read frames through a Unix socket straight into their buffers (see frame-socket.ts) rather
   * than from a stdout pipe. Default: everywhere but Windows.
   */
  readInPlace?: boolean;
  /** Also copy the source's video into segments there, for clips (segment-output.ts). */
  record?: SegmentTarget;
}

/** ffmpeg's recording output failed: when it started (atStart), or writing (a full disk). */
export interface RecordError {
  atStart: boolean;
  message: string;
}

export interface SourceInfo {
  /** Size of the frames this source emits: the source's, bounded to maxSide a side. */
  width: number;
  height: number;
  /** Frames per second this source emits. */
  fps: number;
  /** The source's own size: where every reported coordinate lies. */
  source: PixelSize;
}

export interface SourceFrame extends PooledFrame {
  /** The source's size this frame was scaled from (its own size when it was not). */
  source: PixelSize;
  /** Frames since this ffmpeg started, from 0. */
  index: number;
  /** performance.now() when the frame was fully read. */
  receivedAt: number;
  /**
   * The frame's place on the media's own clock, on performance.now()'s scale: the first frame's
   * receivedAt plus its presentation time since. ffmpeg writes image2pipe at a constant rate
   * (duplicating or dropping frames to keep it), so frame n presents at n / rate.
   */
  mediaAt: number;
  /** Which media clock mediaAt is on: each ffmpeg (each FrameSource) starts one of its own. */
  mediaLine: number;
}

export interface SourceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderrTail: string;
  /** True when stop() ended the process; false is a disconnect or failure. */
  stopped: boolean;
}

/** ffmpeg's own count of the frames it decoded from the source, before any were dropped to the rate. */
export interface SourceProgress {
  /** Frames decoded since this ffmpeg started. */
  frames: number;
  /** performance.now() when the count was read. */
  at: number;
}

export interface FrameSourceEvents {
  info: [SourceInfo];
  frame: [SourceFrame];
  /** About every PROGRESS_PERIOD_S while ffmpeg decodes (from its first output frame on). */
  progress: [SourceProgress];
  exit: [SourceExit];
  /**
   * ffmpeg decodes the stream in software although a hwaccel was asked, and goes on (why: its
   * decoder for the codec cannot use the hwaccel, or the hardware refused the stream). Once at most.
   */
  software: [string];
}

export const DEFAULT_FPS = 25;
const DECODE_THREADS = 1;
// Rates above this are timebases ffmpeg could not tell from a frame rate (e.g. "90k tbr").
const MAX_PLAUSIBLE_FPS = 240;
const DEFAULT_IO_TIMEOUT_MS = 10_000;
/**
 * A live source's timestamps that move forward more than this between packets are taken as a jump,
 * not a pause. Above the 1 s between frames of the slowest cameras; a real pause this long is
 * mostly a stall anyway (stall-detector.ts).
 */
const TIMESTAMP_JUMP_S = 2;
const DEFAULT_STOP_GRACE_MS = 1_000;
const STDERR_TAIL_CHARS = 4096;
const ERROR_LINES_KEPT = 8;
/** How often ffmpeg reports how many frames it decoded (its -progress, on a pipe of its own). */
const PROGRESS_PERIOD_S = 0.5;
const PROGRESS_FD = 3;
/** A -progress line is a short `key=value`; anything longer is cut there. */
const PROGRESS_LINE_CHARS = 256;
/**
 * The frames leave ffmpeg on its second output. The first, a null output of every decoded frame,
 * exists so that ffmpeg's progress (which counts its first video output) counts what the source
 * delivers rather than the frames left after the rate filter: a wrapped frame reference, no copy.
 */
const FRAMES_OUTPUT = /^Output #1,/;
/**
 * ffmpeg could not start the recording output (output #2, after the frames): it needs the stream's
 * size before the first packet, which a quick start may end without (an RTSP camera whose SDP
 * carries no parameter sets, joined between keyframes), and a file it can write. ffmpeg then waits
 * for ever with no frame on any output.
 */
const RECORD_OUTPUT_FAILED =
  /^(Could not write header for output file #2 |Error initializing output stream 2:)/;
/**
 * ffmpeg could not write a segment (the data dir's disk is full): it then ends every output, the
 * frames too. The recording is its only output to a file, so a full disk can only be its.
 */
const RECORD_WRITE_FAILED = /No space left on device/;
// Read and thrown away while ffmpeg is being stopped.
const DISCARD = new Uint8Array(64 * 1024);
/** Media clocks started in this process: each FrameSource's frames carry the number of its own. */
let mediaLines = 0;
/**
 * A new number of this process's ffmpeg runs: a FrameSource's media clock, and what names a run's
 * recorded segments (main-recorder.ts takes its own from the same count, so that no two runs share one).
 */
export const newMediaLine = (): number => ++mediaLines;

// ffmpeg's closing words on an input that failed ("rtsp://cam/x: Input/output error") restate that
// the more telling line before them failed ("Failed to resolve hostname cam"): that one stays the error.
const RESTATED = /: Input\/output error$|^Error opening input/;

const LEVEL_TAG = /^(\[[^\]]* @ [^\]]*\] )?\[(trace|debug|verbose|info|warning|error|fatal|panic)\] /;

/**
 * The last few KB of ffmpeg's stderr as whole lines, for diagnostics. ffmpeg runs with
 * `-loglevel level+info`, so each line carries its level: the tag is removed from the kept line and
 * tells which line is the last error (the final statistics would otherwise hide it).
 */
export class StderrTail {
  private readonly decoder = new StringDecoder('utf8');
  private lines: string[] = [];
  private chars = 0;
  private partial = '';
  lastError = '';
  /** The last few error-level lines: one failure is often told over several (the cause, then its effect). */
  readonly errors: string[] = [];

  /** Adds a chunk and returns the lines it completed, without level tags. */
  push(chunk: Buffer): string[] {
    const parts = (this.partial + this.decoder.write(chunk)).split(/\r?\n|\r/);
    // A line that never ends must not grow without bound either.
    this.partial = (parts.pop() ?? '').slice(-STDERR_TAIL_CHARS);
    return parts.map((line) => this.addLine(line));
  }

  /** Keeps the unfinished last line once the stream has ended. */
  end(): void {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    if (rest) this.addLine(rest);
  }

  /** Keeps a line; untagged lines of our own (spawn or stream failures) pass level 'error'. */
  addLine(tagged: string, level?: 'error'): string {
    const match = LEVEL_TAG.exec(tagged);
    const line = match ? (match[1] ?? '') + tagged.slice(match[0].length) : tagged;
    if (!line.trim()) return line;
    const severity = level ?? match?.[2];
    const failure = severity === 'error' || severity === 'fatal' || severity === 'panic';
    if (failure && this.errors.push(line.trim()) > ERROR_LINES_KEPT) this.errors.shift();
    if (failure && !(this.lastError && RESTATED.test(line.trim()))) this.lastError = line.trim();
    this.lines.push(line);
    this.chars += line.length + 1;
    while (this.chars > STDERR_TAIL_CHARS && this.lines.length > 1)
      this.chars -= (this.lines.shift() as string).length + 1;
    return line;
  }

  get text(): string {
    return this.lines.join('\n');
  }

  get lastLine(): string {
    return this.lines.at(-1)?.trim() ?? '';
  }
}

/**
 * One ffmpeg process that decodes a source's first video stream to raw RGB frames. Frames are
 * emitted synchronously as soon as they are complete, so Node never holds more than the frame being
 * read: a consumer that cannot keep up must drop frames itself, and one that blocks the event loop
 * slows ffmpeg through the pipe. The rate comes from ffmpeg's description of the input stream.
 */
export class FrameSource extends EventEmitter<FrameSourceEvents> {
  private child: ChildProcess | null = null;
  private readonly reader: PpmFrameReader;
  private readonly stderr = new StderrTail();
  private refusal: Error | null = null;
  private frameCount = 0;
  private decodedFrames = 0;
  private progressLine = '';
  private inputFps: number | null = null;
  /** The rate ffmpeg writes frames at, from its description of the output. */
  private outputFps: number | null = null;
  private describingOutput = false;
  /** Where mediaAt counts from: the first emitted frame's receivedAt, at the rate then known. */
  private clockAnchor: { index: number; at: number; rate: number } | null = null;
  private readonly mediaLine = newMediaLine();
  private inputDurationS: number | null = null;
  /** The input's size as ffmpeg described it (its probe of the stream), before any scaling. */
  private describedSize: PixelSize | null = null;
  private inputCodec: string | null = null;
  private recordFailure: RecordError | null = null;
  private sourceInfo: SourceInfo | null = null;
  /** Frames decoded before the input description was read wait here (only the newest). */
  private heldFrame: SourceFrame | null = null;
  /** Set once ffmpeg is known to decode in software although a hwaccel was asked. */
  private inSoftware = false;
  private stopRequested = false;
  private terminating = false;
  private exited: Promise<void> | null = null;
  private ended = false;

  /** This ffmpeg's number in the process, which names its recorded segments. */
  get run(): number {
    return this.mediaLine;
  }

  constructor(
    readonly source: SourceUrl,
    private readonly options: FrameSourceOptions = {},
  ) {
    super();
    this.reader = new PpmFrameReader(undefined, options.maxPixels);
  }

  /** The ffmpeg arguments for this source. */
  args(): string[] {
    const { source, options } = this;
    const args = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'level+info'];
    args.push('-progress', `pipe:${PROGRESS_FD}`, '-stats_period', String(PROGRESS_PERIOD_S));
    // One decoding thread per stream: with many cameras it costs least (12% less CPU than ffmpeg's
    // automatic threads on a 1080p25 camera, bench:capacity) and adds no frame-thread delay. One
    // thread decodes H.264 1080p at about 250 fps here, so 4K (four times the pixels) near 60.
    args.push('-threads', String(DECODE_THREADS));
    args.push(...hwaccelArgs(options.hwaccel ?? 'none'));
    // A recording needs the stream's parameters before it starts (segment-output.ts).
    if (source.kind !== 'file' && !options.record?.fullProbe) args.push(...QUICK_START_ARGS);
    args.push(...sourceInputArgs(source, options));
    args.push('-map', '0:v:0', '-c:v', 'wrapped_avframe', '-f', 'null', '-');
    args.push('-map', '0:v:0', '-an', '-sn', '-dn');
    // Frames are dropped to the rate before they are scaled, so that dropped ones cost nothing.
    const filters = [
      ...(options.outputFps ? [`fps=${options.outputFps}`] : []),
      boundingScaleFilter(options.maxSide),
    ];
    args.push('-vf', filters.join(','));
    args.push('-f', 'image2pipe', '-c:v', 'ppm', '-pix_fmt', 'rgb24', '-');
    // Last, so that the frames stay output #1 (FRAMES_OUTPUT).
    if (options.record) args.push(...segmentOutputArgs(options.record, this.run));
    return args;
  }

  /** Starts ffmpeg. Call once, after attaching listeners. Throws when there is no ffmpeg to start. */
  start(): void {
    if (this.exited) throw new Error('FrameSource already started');
    const command = this.ffmpeg();
    if (!(this.options.readInPlace ?? process.platform !== 'win32')) {
      // Spawn refusing the arguments throws here, before anything is started.
      this.exited = this.spawn(command, null);
      return;
    }
    this.exited = openFrameSocket({
      target: () => this.readTarget(),
      read: (bytes) => this.readInPlace(bytes),
    })
      .catch((error: Error) => {
        // The pipe is slower but works anywhere: no frame is lost to a socket that could not be made.
        this.stderr.addLine(`frame socket: ${error.message}; reading ffmpeg's stdout instead`);
        return null;
      })
      .then((socket) => {
        if (!this.stopRequested) return this.spawnOrExit(command, socket);
        closeSocket(socket);
        this.exit(null, null);
      });
  }

  /** spawn() once start() has returned: a refusal is then an exit like any failed start. */
  private spawnOrExit(command: string, socket: FrameSocket | null): Promise<void> {
    try {
      return this.spawn(command, socket);
    } catch (error) {
      closeSocket(socket);
      this.stderr.addLine((error as Error).message, 'error');
      this.exit(null, null);
      return Promise.resolve();
    }
  }

  /**
   * Spawns ffmpeg writing its frames to the socket, or else to a stdout pipe read here. Resolves
   * once it has exited and its last frame bytes were read.
   */
  private spawn(command: string, socket: FrameSocket | null): Promise<void> {
    // Owned: ffmpeg dies with the engine even on kill -9.
    const child = spawnOwned(command, this.args(), {
      stdio: ['ignore', socket ? socket.childEnd : 'pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    // The child has its own copy of the socket's end now.
    socket?.childEnd.destroy();
    // 'close' comes after the exit and after the last bytes of the stdout pipe were read; with the
    // socket, its end closes once those were read.
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (code, signal) => resolve([code, signal])),
    );
    const drained = socket ? once(socket.ours, 'close').catch(() => undefined) : undefined;
    // A spawn failure (EACCES, ENOENT) still ends in 'close'; keep its reason for the exit event.
    child.on('error', (error) => {
      this.stderr.addLine(error.message, 'error');
      socket?.ours.destroy();
    });
    socket?.ours.on('error', (error) => this.stderr.addLine(`frame socket: ${error.message}`, 'error'));
    (child.stderr as Readable).on('data', (chunk: Buffer) => {
      for (const line of this.stderr.push(chunk)) {
        this.refusal ??= sourceRefusal(line);
        if (this.options.record && !this.recordFailure) this.recordFailed(line.trim());
        this.readStderrLine(line);
      }
    });
    if (!socket) (child.stdout as Readable).on('data', (chunk: Buffer) => this.readStdout(chunk));
    (child.stdio[PROGRESS_FD] as Readable).on('data', (chunk: Buffer) => this.readProgress(chunk));
    return Promise.all([closed, drained]).then(([[code, signal]]) => this.exit(code, signal));
  }

  private exit(code: number | null, signal: NodeJS.Signals | null): void {
    this.ended = true;
    this.stderr.end();
    this.emit('exit', { code, signal, stderrTail: this.stderr.text, stopped: this.stopRequested });
  }

  /** Ends ffmpeg: SIGTERM, then SIGKILL after the grace period. Resolves once it has exited. */
  stop(): Promise<void> {
    this.stopRequested = true;
    return this.terminate();
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Size and rate, once the first frame and ffmpeg's description of the input are in. */
  get info(): SourceInfo | null {
    return this.sourceInfo;
  }

  /** The input video's codec as ffmpeg names it ('h264', 'mjpeg'), once it described the input. */
  get codec(): string | null {
    return this.inputCodec;
  }

  /** Why ffmpeg's recording output failed, in its words; null while it works. */
  get recordError(): RecordError | null {
    return this.recordFailure;
  }

  /** Started and not yet exited. */
  get alive(): boolean {
    return this.exited !== null && !this.ended;
  }

  private recordFailed(line: string): void {
    if (RECORD_OUTPUT_FAILED.test(line)) {
      this.recordFailure = { atStart: true, message: line };
      // ffmpeg then waits with no frame for anything: it is ended, to be opened again.
      void this.terminate();
    } else if (RECORD_WRITE_FAILED.test(line)) this.recordFailure = { atStart: false, message: line };
  }

  /** Length of a file source in seconds, from ffmpeg's input description; null for live streams. */
  get durationS(): number | null {
    return this.inputDurationS;
  }

  /** The last ~4 KB of ffmpeg's stderr, whole lines. */
  get stderrTail(): string {
    return this.stderr.text;
  }

  /** Why the source failed: why ffmpeg refused it, else its last error line, else its last line. */
  get lastError(): string {
    return this.refusal?.message || this.stderr.lastError || this.stderr.lastLine;
  }

  /** Set when ffmpeg refused the source itself (too large, not video): trying again cannot help. */
  get refused(): Error | null {
    return this.refusal;
  }

  /** Frames ffmpeg decoded from the source so far, as it last said; 0 before it said. */
  get inputFrames(): number {
    return this.decodedFrames;
  }

  private readProgress(chunk: Buffer): void {
    const lines = (this.progressLine + chunk.toString('latin1')).split('\n');
    this.progressLine = (lines.pop() ?? '').slice(-PROGRESS_LINE_CHARS);
    for (const line of lines) {
      const frames = /^frame=(\d+)\s*$/.exec(line);
      if (!frames || this.terminating) continue;
      this.decodedFrames = Number(frames[1]);
      this.emit('progress', { frames: this.decodedFrames, at: performance.now() });
    }
  }

  private readStdout(chunk: Buffer): void {
    // Once ending, stdout is still drained (so ffmpeg cannot block on it) but not decoded.
    if (!this.terminating) this.decoded(() => this.reader.push(chunk));
  }

  private readTarget(): Uint8Array {
    return this.terminating ? DISCARD : this.reader.target();
  }

  private readInPlace(bytes: number): void {
    if (!this.terminating) this.decoded(() => this.reader.advance(bytes));
  }

  private decoded(read: () => PooledFrame[]): void {
    let frames: PooledFrame[];
    try {
      frames = read();
    } catch (error) {
      this.stderr.addLine(`frame stream: ${(error as Error).message}`, 'error');
      void this.terminate();
      return;
    }
    const receivedAt = performance.now();
    for (const frame of frames) {
      if (this.terminating) return;
      const source = sourceSizeOf(frame, this.describedSize, this.options.maxSide);
      const sourceFrame = {
        ...frame,
        index: this.frameCount++,
        receivedAt,
        mediaAt: receivedAt,
        mediaLine: this.mediaLine,
        source,
      };
      if (this.sourceInfo) this.emit('frame', this.onMediaClock(sourceFrame, this.sourceInfo.fps));
      else {
        this.heldFrame?.release();
        this.heldFrame = sourceFrame;
        this.announceWhenKnown();
      }
    }
  }

  private terminate(): Promise<void> {
    const { child, exited } = this;
    // Not spawned yet: start() sees stopRequested once its socket is ready and ends there.
    if (!child || !exited) return exited ?? Promise.resolve();
    if (!this.terminating && child.exitCode === null && child.signalCode === null) {
      this.terminating = true;
      child.kill('SIGTERM');
      // Real time, not a clock: it guards a real process, whose exit clears it.
      const killer = setTimeout(
        () => child.kill('SIGKILL'),
        this.options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS,
      );
      void exited.then(() => clearTimeout(killer));
    }
    return exited;
  }

  /** Sets the frame's mediaAt from its index and the output rate (the source's rate until ffmpeg names it). */
  private onMediaClock(frame: SourceFrame, fps: number): SourceFrame {
    const rate = this.outputFps ?? fps;
    let anchor = this.clockAnchor ?? { index: frame.index, at: frame.receivedAt, rate };
    // ffmpeg named its output rate after frames came: the clock goes on from the previous frame at
    // the new rate, where counting every frame at the new rate would move them all.
    if (anchor.rate !== rate)
      anchor = { index: frame.index - 1, at: presents(anchor, frame.index - 1), rate };
    this.clockAnchor = anchor;
    frame.mediaAt = presents(anchor, frame.index);
    return frame;
  }

  private readStderrLine(line: string): void {
    const refusal = hwaccelRefusal(line);
    if (refusal) this.decodesInSoftware(refusal);
    if (FRAMES_OUTPUT.test(line.trim())) this.describingOutput = true;
    else if (this.describingOutput && this.outputFps === null) this.outputFps = videoStreamFps(line);
    if (this.inputFps !== null) return;
    const duration = /^\s*Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)/.exec(line);
    if (duration) {
      this.inputDurationS = Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]);
      return;
    }
    const fps = videoStreamFps(line);
    if (fps !== null) {
      this.inputFps = fps;
      this.describedSize = videoStreamSize(line);
      this.inputCodec = videoStreamFormat(line)?.codec ?? null;
      this.checkDecoder(this.inputCodec ?? undefined);
    }
    // The input description ends where ffmpeg starts describing the output.
    else if (/^(Stream mapping:|Output #)/.test(line.trim())) this.inputFps = DEFAULT_FPS;
    else return;
    this.announceWhenKnown();
  }

  /** Whether ffmpeg's decoder for the input's codec can use the hwaccel asked: else it decodes in software. */
  private checkDecoder(codec: string | undefined): void {
    const hwaccel = this.options.hwaccel ?? 'none';
    if (hwaccel === 'none' || !codec) return;
    void codecDecoding(this.ffmpeg(), codec).then((decoding) => {
      if (decoding && !decoding.hwaccels.includes(hwaccel))
        this.decodesInSoftware(`ffmpeg's ${decoding.decoder ?? codec} decoder cannot use ${hwaccel}`);
    });
  }

  private ffmpeg(): string {
    return this.options.ffmpeg ?? findFfmpeg();
  }

  private decodesInSoftware(why: string): void {
    if (this.inSoftware || this.stopRequested) return;
    this.inSoftware = true;
    this.emit('software', why);
  }

  private announceWhenKnown(): void {
    const frame = this.heldFrame;
    if (this.sourceInfo || this.inputFps === null || !frame) return;
    const fps = this.options.outputFps ? Math.min(this.inputFps, this.options.outputFps) : this.inputFps;
    // The input's description may have come after the frame was decoded.
    frame.source = sourceSizeOf(frame, this.describedSize, this.options.maxSide);
    this.sourceInfo = { width: frame.width, height: frame.height, fps, source: frame.source };
    this.heldFrame = null;
    this.emit('info', this.sourceInfo);
    this.emit('frame', this.onMediaClock(frame, fps));
  }
}

function closeSocket(socket: FrameSocket | null): void {
  socket?.childEnd.destroy();
  socket?.ours.destroy();
}

/**
 * ffmpeg's input options and `-i` for a source: what it may open and decode, how it reads, and
 * (`live`) that files and HTTP recordings play in real time (files loop) as if they were live cameras.
 */
export function sourceInputArgs(
  source: SourceUrl,
  options: Pick<FrameSourceOptions, 'transport' | 'ioTimeoutMs' | 'seekS' | 'maxPixels' | 'readRate'> = {},
  live = true,
): string[] {
  const args = [
    ...sourceLimitArgs(source.kind, options.maxPixels),
    '-protocol_whitelist',
    protocolWhitelist(source.kind),
  ];
  if (source.kind === 'rtsp') args.push('-rtsp_transport', options.transport ?? 'tcp');
  // A live source's timestamps step back or jump when its publisher restarts or loops behind an
  // RTMP server, or a camera restarts. ffmpeg mends that only for demuxers that expect it
  // (live_flv, mpegts, HLS): RTMP is read as live FLV, and forward jumps over 2 s are closed too
  // (backward ones always are). Unmended, the fps filter waits for the old timestamps to come round
  // again, which a restarted publisher never does (the stream stalls), or fills a jump with copies.
  if (source.kind === 'rtmp') args.push('-f', 'live_flv');
  if (source.kind !== 'file') args.push('-dts_delta_threshold', String(TIMESTAMP_JUMP_S));
  // The RTSP demuxer has its own socket timeout option; the others go through the protocol layer.
  const ioTimeoutUs = String((options.ioTimeoutMs ?? DEFAULT_IO_TIMEOUT_MS) * 1000);
  if (source.kind === 'rtsp') args.push('-timeout', ioTimeoutUs);
  else if (source.kind !== 'file') args.push('-rw_timeout', ioTimeoutUs);
  // Files play as live and loop; http may be a plain MP4 or HLS VOD, which ffmpeg would otherwise
  // decode as fast as it can (live http streams arrive at their own rate anyway).
  const rate = options.readRate ?? 1;
  if (live && source.kind === 'file')
    args.push(...(rate === 1 ? ['-re'] : ['-readrate', String(rate)]), '-stream_loop', '-1');
  if (live && source.kind === 'http') args.push('-re');
  if (source.kind === 'file' && options.seekS) args.push('-ss', options.seekS.toFixed(3));
  args.push('-i', source.input);
  return args;
}

/** Where frame `index` lies on a media clock anchored at `at` for frame `anchor.index`. */
const presents = (anchor: { index: number; at: number; rate: number }, index: number) =>
  anchor.at + ((index - anchor.index) * 1000) / anchor.rate;

/**
 * The frame rate in one of ffmpeg's input stream lines, e.g. "Stream #0:0[0x100](und): Video: h264,
 * yuv420p, 768x576, 10 fps, 10 tbr, 90k tbn": fps, else tbr, else 25. Null for other lines.
 */
export function videoStreamFps(line: string): number | null {
  if (!/^\s*Stream #\d+:\d+\S*: Video: /.test(line)) return null;
  return rate(line, 'fps') ?? rate(line, 'tbr') ?? DEFAULT_FPS;
}

/** Codec and pixel format from the first input video stream line, e.g. "Video: h264 (High), yuv420p(progressive), ...". */
export function videoStreamFormat(line: string): { codec: string; pixelFormat: string } | null {
  const match = /^\s*Stream #0:\d+\S*: Video: (\w+)[^,]*(?:, (\w+))?/.exec(line);
  return match ? { codec: match[1] ?? '', pixelFormat: match[2] ?? '' } : null;
}

/**
 * The picture size in an input stream line ("..., yuv420p, 3840x2160 [SAR 1:1 DAR 16:9], 25 fps"),
 * not a codec tag such as "(avc1 / 0x31637661)"; null when it names none.
 */
export function videoStreamSize(line: string): PixelSize | null {
  const match = /[\s,](\d{1,5})x(\d{1,5})(?=[\s,[]|$)/.exec(line);
  if (!match) return null;
  const [width, height] = [Number(match[1]), Number(match[2])];
  return width > 0 && height > 0 ? { width, height } : null;
}

function rate(line: string, unit: 'fps' | 'tbr'): number | null {
  const match = new RegExp(`[\\s,](\\d+(?:\\.\\d+)?)(k?) ${unit}\\b`).exec(line);
  if (!match) return null;
  const value = Number(match[1]) * (match[2] ? 1000 : 1);
  return value > 0 && value <= MAX_PLAUSIBLE_FPS ? value : null;
}
