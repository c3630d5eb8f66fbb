import type { Clock } from '../clock';
import { sourceInputArgs } from '../media/frame-source';
import type { MediaFolders } from '../media/media-folders';
import { probeFirstFrame } from '../media/probe';
import { QUICK_START_ARGS } from '../media/quick-start';
import type { SourceUrl } from '../media/source-url';
import { FMP4_TEE_OUTPUT } from './fmp4';
import { channelFeed, Fmp4Channel } from './fmp4-channel';
import {
  type HlsFile,
  type HlsRoot,
  hlsTeeOutput,
  newStreamId,
  nextSegmentNumber,
  PLAYLIST,
  readHlsFile,
  waitForPlaylist,
} from './hls-files';
import { DEFAULT_IDLE_MS, IdleWatch } from './idle-watch';
import { LIVE_DEFAULTS, Slots } from './limits';
import { SupervisedFfmpeg } from './supervised-ffmpeg';

export interface PreviewDeps {
  ffmpeg: string;
  root: HlsRoot;
  /** Runs the idle timers. */
  clock: Clock;
  /** A preview nobody fetched anything of for this long is released. Default 60 s. */
  idleMs?: number;
  /** How long the source may take to give its first frame. Default 15 s (as a task's start). */
  openTimeoutMs?: number;
  /** Sources with larger frames are refused. Default DEFAULT_MAX_SOURCE_PIXELS. */
  maxSourcePixels?: number;
  /** Previews at once; more are refused (LiveLimits.maxPreviews). */
  maxPreviews?: number;
  /** Where file sources may come from: a file outside them is refused before anything runs. */
  sources: MediaFolders;
}

export interface PreviewInfo {
  id: string;
  width: number;
  height: number;
}

interface Preview extends PreviewInfo {
  dir: string;
  child: SupervisedFfmpeg;
  channel: Fmp4Channel;
  idle: IdleWatch | null;
  /** Gives the preview's slot back. */
  release: () => void;
}

const DEFAULT_OPEN_TIMEOUT_MS = 15_000;
/** How long a request for a preview's playlist waits for its first segment (1 s of video). */
const PLAYLIST_WAIT_MS = 5_000;
/** Seconds between keyframes: a low-latency viewer starts at the next one. */
const KEYFRAME_S = 0.5;

/**
 * The ffmpeg arguments of a preview: the source read as a task's is (protocol whitelist, files
 * looped in real time), always encoded to H.264 (bounded to 1280x720) with a keyframe every half
 * second, so that nothing waits for the source's own keyframes, which may be 25 s apart: to HLS for
 * players, and to fragmented MP4 (fd 3) for the console's low-latency player.
 */
function previewArgs(source: SourceUrl, startNumber: number, maxPixels?: number): string[] {
  const fit = "scale='min(1280,iw)':'min(720,ih)':force_original_aspect_ratio=decrease:force_divisible_by=2";
  return [
    ...['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'level+warning'],
    ...QUICK_START_ARGS,
    ...sourceInputArgs(source, { maxPixels }),
    ...['-map', '0:v:0', '-an', '-sn', '-dn', '-vf', `${fit},format=yuv420p`],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-crf', '23'],
    ...['-maxrate', '4000k', '-bufsize', '4000k'],
    ...['-force_key_frames', `expr:gte(t,n_forced*${KEYFRAME_S})`],
    // The MP4 output's init segment needs the parameter sets; HLS keeps them in-band too.
    ...['-flags', '+global_header', '-x264-params', 'repeat-headers=1'],
    ...['-f', 'tee', `${hlsTeeOutput(startNumber)}|${FMP4_TEE_OUTPUT}`],
  ];
}

/**
 * Raw previews of sources (4.12), for drawing polygons before a task exists: one ffmpeg per
 * preview, started at once beside the probe that reads the source's frame size; open() answers when
 * both the size and the first encoded frame are there. HLS in the preview's own folder, fragmented
 * MP4 to low-latency viewers. A preview nobody fetched anything of for the idle time is released,
 * so a console that went away leaves nothing running. Previews are bounded: each holds a slot from
 * its request until it is released or fails to open.
 */
export class PreviewStreams {
  private readonly previews = new Map<string, Preview>();
  private readonly slots: Slots;
  private closed = false;

  constructor(private readonly deps: PreviewDeps) {
    const max = deps.maxPreviews ?? LIVE_DEFAULTS.maxPreviews;
    this.slots = new Slots(
      max,
      `the engine already runs ${max} previews, the most it allows; release one (DELETE /api/stream/{stream_id}) or try again later`,
    );
  }

  /**
   * Opens a preview; rejects (leaving nothing behind) when the source gives no frame, when `signal`
   * aborts (its client went away), and with DomainError 'live.limit' when every preview slot is taken.
   */
  async open(requested: SourceUrl, signal?: AbortSignal): Promise<PreviewInfo> {
    const source = await this.deps.sources.resolve(requested);
    const timeoutMs = this.deps.openTimeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
    const maxPixels = this.deps.maxSourcePixels;
    const release = this.slots.take();
    const id = newStreamId();
    let dir: string;
    try {
      dir = await this.deps.root.create(`preview-${id}`);
    } catch (error) {
      release();
      throw error;
    }
    if (this.closed) {
      release();
      await this.deps.root.remove(dir);
      throw new Error('the engine is stopping');
    }
    const child = new SupervisedFfmpeg({
      ffmpeg: this.deps.ffmpeg,
      cwd: dir,
      extraOutput: true,
      args: async () => previewArgs(source, await nextSegmentNumber(dir), maxPixels),
    });
    const channel = new Fmp4Channel();
    let framed: () => void = () => {};
    const firstFrame = new Promise<void>((resolve) => {
      framed = resolve;
    });
    const feed = channelFeed(channel, () => framed());
    child.on('extra', feed.write);
    child.on('spawned', feed.restart);
    const preview: Preview = { id, width: 0, height: 0, dir, child, channel, idle: null, release };
    this.previews.set(id, preview);
    child.start();
    try {
      const probe = await probeFirstFrame(this.deps.ffmpeg, source, { timeoutMs, maxPixels, signal });
      preview.width = probe.width;
      preview.height = probe.height;
      await within(firstFrame, timeoutMs, () => child.lastError || 'no video frame was encoded', signal);
    } catch (error) {
      await this.close(id);
      throw error;
    }
    child.markLive();
    const idleMs = this.deps.idleMs ?? DEFAULT_IDLE_MS;
    preview.idle = new IdleWatch(this.deps.clock, idleMs, () => void this.close(id));
    return { id, width: preview.width, height: preview.height };
  }

  /** A preview's low-latency viewers, kept alive while one watches; null when there is none. */
  channel(id: string): { channel: Fmp4Channel; keepAlive: () => void } | null {
    const preview = this.previews.get(id);
    if (!preview?.idle) return null;
    const idle = preview.idle;
    return { channel: preview.channel, keepAlive: () => idle.touch() };
  }

  /**
   * A playlist (its segment URIs with segmentToken) or segment of a preview; null when none. The
   * preview answers before its first segment is whole: a playlist asked for meanwhile waits for it.
   */
  async file(id: string, name: string, segmentToken?: string): Promise<HlsFile | null> {
    const preview = this.previews.get(id);
    if (!preview) return null;
    preview.idle?.touch();
    if (name === PLAYLIST)
      await waitForPlaylist(preview.dir, PLAYLIST_WAIT_MS, () =>
        this.previews.has(id) ? null : 'the preview was closed',
      ).catch(() => {
        // Answered as missing below.
      });
    return readHlsFile(preview.dir, name, segmentToken);
  }

  /** Releases a preview; false when there is none with that id. */
  async close(id: string): Promise<boolean> {
    const preview = this.previews.get(id);
    if (!preview) return false;
    this.previews.delete(id);
    preview.idle?.cancel();
    await preview.child.stop();
    preview.release();
    await this.deps.root.remove(preview.dir);
    return true;
  }

  /** Engine shutdown: every preview stops and its folder goes. */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.previews.keys()].map((id) => this.close(id)));
  }
}

/** Resolves as `promise` does, or rejects with what `why` says once timeoutMs have passed. */
async function within(
  promise: Promise<void>,
  timeoutMs: number,
  why: () => string,
  signal?: AbortSignal,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const timeout = new Promise<never>((_, reject) => {
    // Real time, not a clock: it waits on a real ffmpeg.
    timer = setTimeout(() => reject(new Error(why())), timeoutMs);
    onAbort = () => reject(new Error('the preview was abandoned while its source opened'));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
