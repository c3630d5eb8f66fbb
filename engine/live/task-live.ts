import type { Clock } from '../clock';
import type { AiVideoHealth } from '../contract/health';
import type { AnalysisStream, WatchdogFrame } from '../media/stream-watchdog';
import type { AnalysedFrame, TaskPipeline } from '../pipeline/task-pipeline';
import type { Osd } from '../tasks/schema';
import { AiStream } from './ai-stream';
import { bitrateStep } from './bitrate';
import type { Fmp4Channel } from './fmp4-channel';
import { type HlsFile, type HlsRoot, newStreamId, readHlsFile } from './hls-files';
import { DEFAULT_IDLE_MS, IdleWatch } from './idle-watch';
import { limitReached, type Slots } from './limits';
import { redacted } from './push';
import { videoSize, widthStep } from './video-size';

export interface LiveDeps {
  ffmpeg: string;
  root: HlsRoot;
  /** Runs the idle timers. */
  clock: Clock;
  /** A viewer without an RTMP push that fetched nothing for this long is released. Default 60 s. */
  idleMs?: number;
  /** The AI-video encoders of every task together (LiveLimits.maxAiVideos). */
  encoders: Slots;
  /** Encoders one task may run (LiveLimits.maxAiVideosPerTask). */
  maxPerTask: number;
  /** The RTMP pushes of every task together (LiveLimits.maxPushes). */
  pushes: Slots;
  /** LiveLimits.pushTimeoutMs. */
  pushTimeoutMs: number;
  /** Told when a push ends on its own: the redacted server and why (the engine logs it). */
  onPushEnded?(server: string, reason: string): void;
}

export interface LiveRequest {
  appIds: readonly string[];
  bitrateKbps: number;
  /** RTMP push URL, or ''. */
  rtmp: string;
  /** Scale the video down to about this width (video-size.ts); absent: the source's size. */
  width?: number;
}

/** A viewer as open() gives it: its id and what its video is encoded at. */
export interface OpenedViewer {
  id: string;
  bitrateKbps: number;
  width: number;
  height: number;
}

/** One caller's hold on an AI video (the `stream` id of 4.10); DELETE 4.11 releases it. */
interface Viewer {
  id: string;
  key: string;
  rtmp: string;
  /**
   * Push-less viewers, and those whose push ended: the RTMP server is the consumer of a push, not
   * a player.
   */
  idle: IdleWatch | null;
}

/** A running video: the key of its app_ids, bitrate and width, and the encoder slot it holds. */
interface Feeding {
  key: string;
  release: () => void;
}

/**
 * The AI videos of one running task. Requests for the same applications and bitrate step
 * (bitrate.ts) share one encoder (each gets its own `stream` id); the encoder stops with its last
 * viewer. Encoders are bounded per task and, through shared slots, per engine; so are pushes. While
 * any video runs, the task's source passes every frame (the analysis still takes only its own rate
 * of them), and it goes back to the analysis rate after the last one.
 */
export class TaskLive {
  private readonly streams = new Map<string, Promise<AiStream>>();
  /** Streams being fed frames: from before their encoder is ready until they stop. */
  private readonly feeding = new Map<AiStream, Feeding>();
  private readonly viewers = new Map<string, Viewer>();
  private closed = false;
  private readonly onFrame = (frame: WatchdogFrame) => {
    for (const stream of this.feeding.keys()) stream.onFrame(frame);
  };
  private readonly onAnalysed = (frame: AnalysedFrame) => {
    for (const stream of this.feeding.keys()) stream.onAnalysed(frame);
  };

  constructor(
    private readonly stream: AnalysisStream,
    private readonly pipeline: TaskPipeline,
    private osd: Required<Osd>,
    private readonly deps: LiveDeps,
  ) {
    // First in line: the frame is copied into the AI video before the analysis takes its buffer over.
    stream.prependListener('frame', this.onFrame);
    pipeline.on('analysed', this.onAnalysed);
  }

  /**
   * A new viewer of the AI video of these apps at the bitrate's step and the width's step; starts
   * its encoder if need be. Throws DomainError 'live.limit' when that would pass the task's or the
   * engine's encoders or pushes; nothing is started then.
   */
  async open(request: LiveRequest): Promise<OpenedViewer> {
    if (this.closed) throw new Error('the task is closing');
    const bitrateKbps = bitrateStep(request.bitrateKbps);
    const width = widthStep(request.width, this.stream.info?.width ?? Number.POSITIVE_INFINITY);
    const key = `${[...request.appIds].sort().join(',')}|${bitrateKbps}|${width ?? 'full'}`;
    let starting = this.streams.get(key);
    if (!starting) {
      if (this.streams.size >= this.deps.maxPerTask) {
        throw limitReached(
          `the task already runs ${this.streams.size} AI videos, the most one task may; ask for the app_ids and bitrate of one of them, or release one`,
        );
      }
      const release = this.deps.encoders.take();
      starting = this.startStream({ ...request, bitrateKbps }, width, key, release);
      this.streams.set(key, starting);
      starting.catch(() => {
        if (this.streams.get(key) === starting) this.streams.delete(key);
        this.afterStreamsChanged();
      });
    }
    const stream = await starting;
    if (this.closed || this.streams.get(key) !== starting) throw new Error('the AI video was stopped');
    const id = newStreamId();
    const viewer: Viewer = { id, key, rtmp: '', idle: null };
    this.viewers.set(id, viewer);
    if (request.rtmp) {
      try {
        stream.addPush(request.rtmp, this.deps.ffmpeg);
      } catch (error) {
        // No push slot: the viewer goes, and the encoder with it if it was started for this request.
        await this.close(id);
        throw error;
      }
      viewer.rtmp = request.rtmp;
    } else {
      viewer.idle = this.idleWatch(id);
    }
    return { id, bitrateKbps, width: stream.settings.width, height: stream.settings.height };
  }

  /** Releases a viewer; false when there is none with that id. */
  async close(viewerId: string): Promise<boolean> {
    const viewer = this.viewers.get(viewerId);
    if (!viewer) return false;
    this.viewers.delete(viewerId);
    viewer.idle?.cancel();
    const starting = this.streams.get(viewer.key);
    if (!starting) return true;
    const stream = await starting;
    if (viewer.rtmp) await stream.removePush(viewer.rtmp);
    if ([...this.viewers.values()].some((other) => other.key === viewer.key)) return true;
    if (this.streams.get(viewer.key) === starting) this.streams.delete(viewer.key);
    await this.stopStream(stream);
    this.afterStreamsChanged();
    return true;
  }

  /** A playlist (its segment URIs with segmentToken) or segment of a viewer's video; null when none. */
  async file(viewerId: string, name: string, segmentToken?: string): Promise<HlsFile | null> {
    const viewer = this.viewers.get(viewerId);
    const starting = viewer && this.streams.get(viewer.key);
    if (!viewer || !starting) return null;
    viewer.idle?.touch();
    return readHlsFile((await starting).dir, name, segmentToken);
  }

  /**
   * The low-latency channel of a viewer's video; null when none. While a socket watches it, the
   * viewer is kept from going idle (touch() on each call of `keepAlive`).
   */
  async channel(viewerId: string): Promise<{ channel: Fmp4Channel; keepAlive: () => void } | null> {
    const viewer = this.viewers.get(viewerId);
    const starting = viewer && this.streams.get(viewer.key);
    if (!viewer || !starting) return null;
    viewer.idle?.touch();
    return { channel: (await starting).channel, keepAlive: () => viewer.idle?.touch() };
  }

  /** update-task: new osd settings reach every video at its next frame. */
  setOsd(osd: Required<Osd>): void {
    this.osd = osd;
    void Promise.all(
      [...this.streams.values()].map((starting) => starting.then((stream) => stream.setOsd(osd))),
    ).catch(() => {});
  }

  /** Stops every video of the task and removes their folders (the task closes or the engine stops). */
  async closeAll(): Promise<void> {
    this.closed = true;
    for (const viewer of this.viewers.values()) viewer.idle?.cancel();
    this.viewers.clear();
    const starting = [...this.streams.values()];
    this.streams.clear();
    this.stream.off('frame', this.onFrame);
    this.pipeline.off('analysed', this.onAnalysed);
    // Streams still starting are stopped too: their start then fails at once.
    await Promise.all([
      ...[...this.feeding.keys()].map((stream) => this.stopStream(stream)),
      ...starting.map((promise) => promise.catch(() => {})),
    ]);
  }

  /** Each video of the task with its viewers, encoder and pushes. */
  health(): AiVideoHealth[] {
    return [...this.feeding].map(([stream, { key }]) =>
      stream.health([...this.viewers.values()].filter((viewer) => viewer.key === key).length),
    );
  }

  private idleWatch(viewerId: string): IdleWatch {
    return new IdleWatch(
      this.deps.clock,
      this.deps.idleMs ?? DEFAULT_IDLE_MS,
      () => void this.close(viewerId),
    );
  }

  /**
   * A push of a video ended on its own: its viewers are held like push-less ones from now on, so
   * the encoder stops once nobody fetches its HLS either; the push stays in the health, stopped,
   * with why, until then.
   */
  private pushEnded(key: string, url: string, server: string, reason: string): void {
    for (const viewer of this.viewers.values()) {
      if (viewer.key === key && viewer.rtmp === url && !viewer.idle) viewer.idle = this.idleWatch(viewer.id);
    }
    this.deps.onPushEnded?.(server, reason);
  }

  private async startStream(
    request: LiveRequest,
    width: number | null,
    key: string,
    release: () => void,
  ): Promise<AiStream> {
    try {
      await this.stream.setFullRate(true);
      const info = this.stream.info;
      if (!info || this.closed) throw new Error('the task has no running source');
      const dir = await this.deps.root.create(`ai-${newStreamId()}`);
      if (this.closed) {
        await this.deps.root.remove(dir);
        throw new Error('the task was closed');
      }
      const stream = new AiStream({
        ffmpeg: this.deps.ffmpeg,
        dir,
        appIds: request.appIds,
        bitrateKbps: request.bitrateKbps,
        osd: this.osd,
        ...videoSize(info, width),
        pushes: {
          slots: this.deps.pushes,
          timeoutMs: this.deps.pushTimeoutMs,
          onEnded: (url, reason) => this.pushEnded(key, url, redacted(url), reason),
        },
      });
      this.feeding.set(stream, { key, release });
      try {
        await stream.start();
      } catch (error) {
        await this.stopStream(stream);
        throw error;
      }
      return stream;
    } catch (error) {
      release();
      throw error;
    }
  }

  private async stopStream(stream: AiStream): Promise<void> {
    const feeding = this.feeding.get(stream);
    this.feeding.delete(stream);
    await stream.stop();
    feeding?.release();
    await this.deps.root.remove(stream.dir);
  }

  /** Back to the analysis rate once no video is left. */
  private afterStreamsChanged(): void {
    if (this.streams.size === 0 && !this.closed) void this.stream.setFullRate(false);
  }
}
