import type { Clock } from '../clock';
import type { AiVideoHealth } from '../contract/health';
import type { StreamWatchdog, WatchdogFrame } from '../media/stream-watchdog';
import type { AnalysedFrame, TaskPipeline } from '../pipeline/task-pipeline';
import type { Osd } from '../tasks/schema';
import { AiStream } from './ai-stream';
import type { Fmp4Channel } from './fmp4-channel';
import { type HlsFile, type HlsRoot, newStreamId, readHlsFile } from './hls-files';
import { DEFAULT_IDLE_MS, IdleWatch } from './idle-watch';

export interface LiveDeps {
  ffmpeg: string;
  root: HlsRoot;
  /** Runs the idle timers. */
  clock: Clock;
  /** A viewer without an RTMP push that fetched nothing for this long is released. Default 60 s. */
  idleMs?: number;
}

export interface LiveRequest {
  appIds: readonly string[];
  bitrateKbps: number;
  /** RTMP push URL, or ''. */
  rtmp: string;
}

/** One caller's hold on an AI video (the `stream` id of 4.10); DELETE 4.11 releases it. */
interface Viewer {
  id: string;
  key: string;
  rtmp: string;
  /** Push-less viewers only: the RTMP server is the consumer of a push, not a player. */
  idle: IdleWatch | null;
}

/**
 * The AI videos of one running task. Requests for the same applications and bitrate share one
 * encoder (each gets its own `stream` id); the encoder stops with its last viewer. While any video
 * runs, the task's source passes every frame (the analysis still takes only its own rate of them),
 * and it goes back to the analysis rate after the last one.
 */
export class TaskLive {
  private readonly streams = new Map<string, Promise<AiStream>>();
  /** Streams being fed frames, with their key: from before their encoder is ready until they stop. */
  private readonly feeding = new Map<AiStream, string>();
  private readonly viewers = new Map<string, Viewer>();
  private closed = false;
  private readonly onFrame = (frame: WatchdogFrame) => {
    for (const stream of this.feeding.keys()) stream.onFrame(frame);
  };
  private readonly onAnalysed = (frame: AnalysedFrame) => {
    for (const stream of this.feeding.keys()) stream.onAnalysed(frame);
  };

  constructor(
    private readonly stream: StreamWatchdog,
    private readonly pipeline: TaskPipeline,
    private osd: Required<Osd>,
    private readonly deps: LiveDeps,
  ) {
    // First in line: the frame is copied into the AI video before the analysis takes its buffer over.
    stream.prependListener('frame', this.onFrame);
    pipeline.on('analysed', this.onAnalysed);
  }

  /** A new viewer of the AI video of these apps at this bitrate; starts its encoder if need be. */
  async open(request: LiveRequest): Promise<{ id: string }> {
    if (this.closed) throw new Error('the task is closing');
    const key = `${[...request.appIds].sort().join(',')}|${request.bitrateKbps}`;
    let starting = this.streams.get(key);
    if (!starting) {
      starting = this.startStream(request, key);
      this.streams.set(key, starting);
      starting.catch(() => {
        if (this.streams.get(key) === starting) this.streams.delete(key);
        this.afterStreamsChanged();
      });
    }
    const stream = await starting;
    if (this.closed || this.streams.get(key) !== starting) throw new Error('the AI video was stopped');
    const id = newStreamId();
    const idle = request.rtmp
      ? null
      : new IdleWatch(this.deps.clock, this.deps.idleMs ?? DEFAULT_IDLE_MS, () => void this.close(id));
    this.viewers.set(id, { id, key, rtmp: request.rtmp, idle });
    if (request.rtmp) stream.addPush(request.rtmp, this.deps.ffmpeg);
    return { id };
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
    return [...this.feeding].map(([stream, key]) =>
      stream.health([...this.viewers.values()].filter((viewer) => viewer.key === key).length),
    );
  }

  private async startStream(request: LiveRequest, key: string): Promise<AiStream> {
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
      width: info.width,
      height: info.height,
      fps: info.fps,
    });
    this.feeding.set(stream, key);
    try {
      await stream.start();
    } catch (error) {
      await this.stopStream(stream);
      throw error;
    }
    return stream;
  }

  private async stopStream(stream: AiStream): Promise<void> {
    this.feeding.delete(stream);
    await stream.stop();
    await this.deps.root.remove(stream.dir);
  }

  /** Back to the analysis rate once no video is left. */
  private afterStreamsChanged(): void {
    if (this.streams.size === 0 && !this.closed) void this.stream.setFullRate(false);
  }
}
