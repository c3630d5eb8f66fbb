import type { AiVideoHealth } from '../contract/health';
import type { WatchdogFrame } from '../media/stream-watchdog';
import type { AnalysedFrame } from '../pipeline/task-pipeline';
import type { Osd } from '../tasks/schema';
import { frameTime } from './box-motion';
import { LiveEncoder } from './encoder';
import { channelFeed, Fmp4Channel } from './fmp4-channel';
import { FramePacer } from './frame-pacer';
import type { Slots } from './limits';
import { LiveOverlay } from './live-overlay';
import { RtmpPush } from './push';

/** What the pushes of a video share with every other video's: their slots and timeout. */
export interface PushSettings {
  slots: Slots;
  timeoutMs: number;
  /** A push of this video ended on its own (its URL and why). */
  onEnded(url: string, reason: string): void;
}

export interface AiStreamSettings {
  ffmpeg: string;
  dir: string;
  appIds: readonly string[];
  bitrateKbps: number;
  osd: Required<Osd>;
  width: number;
  height: number;
  fps: number;
  pushes: PushSettings;
}

interface Push {
  push: RtmpPush;
  /** Viewers that asked for this address. */
  users: number;
  /** Gives the push's slot back. */
  release: () => void;
}

/** How often a silent source is checked for repeats owed to the encoder. */
const TICK_MS = 50;

/**
 * One annotated video of a task: every source frame gets the latest drawings of its applications
 * and goes, paced to the source rate, to one encoder, whose HLS every viewer shares, whose
 * fragmented MP4 the low-latency viewers get, and whose MPEG-TS every RTMP push of it receives.
 */
export class AiStream {
  private readonly overlay: LiveOverlay;
  private readonly encoder: LiveEncoder;
  private readonly pacer: FramePacer;
  private readonly pushes = new Map<string, Push>();
  /** The low-latency viewers (WebSocket, fragmented MP4). */
  readonly channel = new Fmp4Channel();
  private ticker: NodeJS.Timeout | null = null;
  private stopping: Promise<void> | null = null;

  constructor(readonly settings: AiStreamSettings) {
    this.overlay = new LiveOverlay(settings.appIds, settings.osd);
    this.pacer = new FramePacer(settings.fps);
    const feed = channelFeed(this.channel);
    this.encoder = new LiveEncoder(settings, {
      mpegts: (chunk) => {
        for (const { push } of this.pushes.values()) push.write(chunk);
      },
      fmp4: feed.write,
      restarted: feed.restart,
    });
  }

  get dir(): string {
    return this.settings.dir;
  }

  /** Starts the encoder; resolves once its first playlist is written. Frames must flow meanwhile. */
  async start(): Promise<void> {
    // Real time, not a clock: it paces a real encoder; FramePacer itself is tested with given times.
    this.ticker = setInterval(() => {
      this.encoder.repeatLast(this.pacer.onTick(performance.now()));
    }, TICK_MS);
    await this.encoder.start();
  }

  onFrame(frame: WatchdogFrame): void {
    if (this.stopping) return;
    const copies = this.pacer.onFrame(frame.receivedAt);
    if (copies === 0) return;
    const draw = (pixels: Uint8Array) =>
      this.overlay.draw(pixels, frame.width, frame.height, frameTime(frame));
    this.encoder.writeFrame(frame, draw, copies);
  }

  onAnalysed(frame: AnalysedFrame): void {
    this.overlay.onAnalysed(frame);
  }

  setOsd(osd: Required<Osd>): void {
    this.overlay.setOsd(osd);
  }

  /**
   * Adds a push target; the same URL twice is one push (a server takes one publisher per name). A
   * new push takes a slot (throws DomainError 'live.limit' when none is free); one that ended is
   * started afresh.
   */
  addPush(url: string, ffmpeg: string): void {
    const entry = this.pushes.get(url);
    if (entry && !entry.push.ended) {
      entry.users += 1;
      return;
    }
    const { slots, timeoutMs, onEnded } = this.settings.pushes;
    const release = slots.take();
    const push: RtmpPush = new RtmpPush(url, ffmpeg, {
      timeoutMs,
      onEnded: (reason) => {
        release();
        // Unless the address was asked for again meanwhile: a fresh push has it now.
        if (this.pushes.get(url)?.push === push) onEnded(url, reason);
      },
    });
    this.pushes.set(url, { push, users: (entry?.users ?? 0) + 1, release });
    push.start();
  }

  async removePush(url: string): Promise<void> {
    const entry = this.pushes.get(url);
    if (!entry) return;
    entry.users -= 1;
    if (entry.users > 0) return;
    this.pushes.delete(url);
    // The slot is free once the process is gone: the engine never runs more pushes than its bound.
    await entry.push.stop();
    entry.release();
  }

  /** Stops the pushes and the encoder; resolves once every ffmpeg of the stream is gone. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.ticker) clearInterval(this.ticker);
      const pushes = [...this.pushes.values()].map(({ push, release }) => push.stop().then(release));
      this.pushes.clear();
      await Promise.all([...pushes, this.encoder.stop()]);
    })();
    return this.stopping;
  }

  /** This video's figures: apps, size, rate, bitrate, encoder and pushes. */
  health(viewers: number): AiVideoHealth {
    const { appIds, width, height, fps, bitrateKbps } = this.settings;
    return {
      app_ids: [...appIds],
      width,
      height,
      fps,
      bitrate_kbps: bitrateKbps,
      viewers,
      encoder: this.encoder.health(),
      frames_written: this.encoder.stats.written,
      frames_dropped: this.encoder.stats.dropped,
      osd_error: this.overlay.lastError || null,
      pushes: [...this.pushes.values()].map(({ push }) => push.health()),
    };
  }
}
