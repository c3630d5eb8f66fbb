import type { Clock } from '../clock';
import { sourceInputArgs } from '../media/frame-source';
import { type ProbeResult, probeFirstFrame } from '../media/probe';
import type { SourceUrl } from '../media/source-url';
import {
  type HlsFile,
  type HlsRoot,
  hlsOutputArgs,
  newStreamId,
  nextSegmentNumber,
  readHlsFile,
  waitForPlaylist,
} from './hls-files';
import { DEFAULT_IDLE_MS, IdleWatch } from './idle-watch';
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
}

export interface PreviewInfo {
  id: string;
  width: number;
  height: number;
}

interface Preview extends PreviewInfo {
  dir: string;
  child: SupervisedFfmpeg;
  idle: IdleWatch | null;
}

const DEFAULT_OPEN_TIMEOUT_MS = 15_000;
/** What browsers play through Media Source Extensions without re-encoding. */
const copyable = (probe: ProbeResult) => probe.codec === 'h264' && /^yuvj?420p$/.test(probe.pixelFormat);

/**
 * The ffmpeg arguments of a preview: the source read as a task's is (protocol whitelist, files
 * looped in real time), its video copied into HLS when it is H.264 4:2:0, else encoded to H.264 with
 * a keyframe every second so that segments stay short.
 */
function previewArgs(source: SourceUrl, copy: boolean, startNumber: number, maxPixels?: number): string[] {
  const video = copy
    ? ['-c:v', 'copy']
    : [
        ...['-vf', 'scale=trunc(iw/2)*2:trunc(ih/2)*2,format=yuv420p'],
        ...['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-crf', '23'],
        ...['-maxrate', '4000k', '-bufsize', '4000k', '-force_key_frames', 'expr:gte(t,n_forced*1)'],
      ];
  return [
    ...['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'level+warning'],
    ...sourceInputArgs(source, { maxPixels }),
    ...['-map', '0:v:0', '-an', '-sn', '-dn', ...video],
    ...hlsOutputArgs(startNumber),
  ];
}

/**
 * Raw previews of sources (4.12), for drawing polygons before a task exists: one ffmpeg per
 * preview, HLS in its own folder, width and height from the first decoded frame. A preview whose
 * playlist and segments nobody fetched for the idle time is released, so a console that went away
 * leaves nothing running.
 */
export class PreviewStreams {
  private readonly previews = new Map<string, Preview>();
  private closed = false;

  constructor(private readonly deps: PreviewDeps) {}

  /** Opens a preview; rejects (leaving nothing behind) when the source gives no frame or no segment. */
  async open(source: SourceUrl): Promise<PreviewInfo> {
    const timeoutMs = this.deps.openTimeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
    const maxPixels = this.deps.maxSourcePixels;
    const probe = await probeFirstFrame(this.deps.ffmpeg, source, { timeoutMs, maxPixels });
    const id = newStreamId();
    const dir = await this.deps.root.create(`preview-${id}`);
    if (this.closed) {
      await this.deps.root.remove(dir);
      throw new Error('the engine is stopping');
    }
    const copy = copyable(probe);
    const child = new SupervisedFfmpeg({
      ffmpeg: this.deps.ffmpeg,
      cwd: dir,
      args: async () => previewArgs(source, copy, await nextSegmentNumber(dir), maxPixels),
    });
    const preview: Preview = {
      id,
      width: probe.width,
      height: probe.height,
      dir,
      child,
      idle: null,
    };
    this.previews.set(id, preview);
    child.start();
    try {
      // A copied stream's first segment ends at its second keyframe, which a camera may send late.
      await waitForPlaylist(dir, 2 * timeoutMs, () => (this.closed ? 'the engine is stopping' : null));
    } catch (error) {
      await this.close(id);
      const detail = child.lastError;
      throw new Error(detail ? `${(error as Error).message}: ${detail}` : (error as Error).message);
    }
    child.markLive();
    const idleMs = this.deps.idleMs ?? DEFAULT_IDLE_MS;
    preview.idle = new IdleWatch(this.deps.clock, idleMs, () => void this.close(id));
    return { id, width: probe.width, height: probe.height };
  }

  /** A playlist (its segment URIs with segmentToken) or segment of a preview; null when none. */
  async file(id: string, name: string, segmentToken?: string): Promise<HlsFile | null> {
    const preview = this.previews.get(id);
    if (!preview) return null;
    preview.idle?.touch();
    return readHlsFile(preview.dir, name, segmentToken);
  }

  /** Releases a preview; false when there is none with that id. */
  async close(id: string): Promise<boolean> {
    const preview = this.previews.get(id);
    if (!preview) return false;
    this.previews.delete(id);
    preview.idle?.cancel();
    await preview.child.stop();
    await this.deps.root.remove(preview.dir);
    return true;
  }

  /** Engine shutdown: every preview stops and its folder goes. */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.previews.keys()].map((id) => this.close(id)));
  }
}
