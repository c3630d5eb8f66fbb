import type {
  AiVideoHealth,
  AnalysisHealth,
  FfmpegHealth,
  GateHealth,
  SubStreamHealth,
  TaskHealth,
} from '../contract/health';

/** What the registry knows of a video task's source while no analysis runs (starting or reopening). */
export interface Reopening {
  status: 'starting' | 'stream_lost';
  source?: { width: number; height: number };
  reconnects: number;
  lastError?: string;
}

/** The motion gate's figures of a task no analysis runs for. */
export const GATE_OFF: GateHealth = {
  enabled: false,
  resting: false,
  rate_fps: 0,
  frames_skipped: 0,
  frames_regions: 0,
  frames_full: 0,
  detector_runs_per_s: 0,
  refresh_s: 0,
  area_fraction: 0,
};

/**
 * A task's health where nothing runs live: an image or diff task, a closed task, or a video task
 * whose source is being opened again (then its stream as far as the registry knows it).
 */
export function restingHealth(
  images: number,
  reopening?: Reopening,
  targetFps: number | null = null,
): AnalysisHealth {
  return {
    stream: reopening
      ? {
          state: reopening.status === 'starting' ? 'connecting' : 'reconnecting',
          width: reopening.source?.width ?? null,
          height: reopening.source?.height ?? null,
          fps: 0,
          reconnects: reopening.reconnects,
          black_frames: 0,
          last_error: reopening.lastError ?? null,
          full_rate: false,
          rate_switch_error: null,
          // Known once the stream runs again.
          decoder: { hwaccel: 'none', fallback: null },
        }
      : null,
    overloaded: false,
    overload: null,
    analysed_fps: 0,
    target_fps: targetFps,
    frames_analysed: 0,
    frames_dropped: 0,
    analysis_errors: 0,
    last_analysis_error: null,
    inference_ms: null,
    images,
    ai_video: [],
    clock_breaks: 0,
    last_clock_break_at: null,
    clips: 'off',
    clips_reason: null,
    gate: GATE_OFF,
    sub_stream: null,
  };
}

/**
 * The dump line of a running video task, rendered from its health for people to read (docs/api.md
 * part 8). Programs read the health object; nothing parses this line.
 */
export function renderDump(health: TaskHealth): string {
  const { stream } = health;
  if (!stream) return 'running';
  const errors =
    (health.analysis_errors > 0
      ? `, ${health.analysis_errors} analysis errors, last: ${health.last_analysis_error ?? ''}`
      : '') + (health.events_refused > 0 ? `, ${health.events_refused} events refused as invalid` : '');
  const video = health.ai_video.length > 0 ? `; ${aiVideoText(health)}` : '';
  if (stream.state !== 'running') {
    return (
      `stream lost (${stream.last_error || 'no frames'}), ${stream.state}: ${stream.reconnects} reconnects, ` +
      `${stream.black_frames} black frames filled${errors}${video}`
    );
  }
  const overloaded = health.overload ? ` (overloaded: ${health.overload})` : '';
  const { gate } = health;
  const gated = gate.enabled
    ? `, motion gate ${gate.resting ? 'resting' : 'on'}: ${gate.detector_runs_per_s.toFixed(1)} detector runs/s, ` +
      `${Math.round(gate.area_fraction * 100)}% of the frame, whole every ${gate.refresh_s} s`
    : '';
  return (
    `running ${health.analysed_fps.toFixed(1)} fps analysed${overloaded}, ` +
    `source ${stream.width}x${stream.height} at ${stream.fps.toFixed(1)} fps, ` +
    `${stream.reconnects} reconnects, ${health.frames_analysed} frames analysed, ` +
    `${health.frames_dropped} dropped (cores busy), inference ${(health.inference_ms ?? 0).toFixed(0)} ms` +
    `${gated}${subStreamText(health.sub_stream)}${errors}${video}`
  );
}

/** A task with a sub-stream: the stream analysis reads, and the main stream's drops (gaps in its clips). */
function subStreamText(sub: SubStreamHealth | null): string {
  if (!sub) return '';
  const analysed =
    sub.analysing === 'sub_stream'
      ? `, analysing the sub-stream ${sub.width}x${sub.height}`
      : `, analysing the main stream (sub-stream ${sub.state}${sub.last_error ? `: ${sub.last_error}` : ''})`;
  const { main } = sub;
  const lost =
    main.state === 'lost'
      ? `, main stream lost (${main.last_error ?? 'not read yet'}): its clips have a gap`
      : '';
  const drops =
    main.drops > 0 && main.state === 'running'
      ? `, main stream dropped ${main.drops} time${main.drops === 1 ? '' : 's'} (last: ${main.last_error})`
      : '';
  return `${analysed}${lost}${drops}`;
}

function aiVideoText(health: TaskHealth): string {
  const failure = health.stream?.rate_switch_error;
  const rate =
    health.stream?.full_rate || !failure
      ? ''
      : ` (at the analysis rate: the source gave no second connection: ${failure})`;
  return `AI video${rate}: ${health.ai_video.map(videoText).join(' | ')}`;
}

function videoText(video: AiVideoHealth): string {
  const dropped = video.frames_dropped > 0 ? ` (${video.frames_dropped} dropped: encoder behind)` : '';
  const parts = [
    `[${video.app_ids.join(',')}] ${video.width}x${video.height} at ${video.fps.toFixed(1)} fps, ` +
      `${video.bitrate_kbps} kbit/s, ${video.viewers} viewer${video.viewers === 1 ? '' : 's'}, ` +
      `encoder ${ffmpegText(video.encoder)}, ${video.frames_written} frames${dropped}`,
    ...video.pushes.map((push) => `push ${push.url}: ${ffmpegText(push.ffmpeg)}`),
  ];
  if (video.osd_error) parts.push(`OSD error: ${video.osd_error}`);
  return parts.join('; ');
}

/** 'live', 'connecting', 'retrying in 4 s (ffmpeg's last error)', or why a push ended. */
export function ffmpegText(ffmpeg: FfmpegHealth): string {
  if (ffmpeg.state === 'retrying')
    return `retrying in ${ffmpeg.retry_in_s ?? 0} s (${ffmpeg.last_error ?? ''})`;
  // A push that ended on its own says why ('ended: not up for 60 s (last error: ...)').
  if (ffmpeg.state === 'stopped' && ffmpeg.last_error) return ffmpeg.last_error;
  return ffmpeg.last_error && ffmpeg.state === 'connecting'
    ? `connecting (last error: ${ffmpeg.last_error})`
    : ffmpeg.state;
}
