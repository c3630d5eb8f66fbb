import { execFile } from 'node:child_process';
import { HWACCELS, type Hwaccel, type HwaccelSetting } from '../contract/health';

/**
 * Hardware decoding. The engine setting names an ffmpeg hwaccel (or auto, or none); auto is resolved
 * once at start to the first of the platform's hwaccels whose device opens. Frames still leave ffmpeg
 * in system memory: without -hwaccel_output_format ffmpeg downloads each decoded frame, so the
 * filters (rate, scale) and the pipe stay as they are. Each stream falls back to software on its own
 * when its hardware path fails (DecodePath), and says so in its health.
 */

export { HWACCELS, type Hwaccel, type HwaccelSetting };

/** How long ffmpeg may take to open a device or describe its decoders. */
const PROBE_TIMEOUT_MS = 5_000;

export function isHwaccelSetting(value: unknown): value is HwaccelSetting {
  return (HWACCELS as readonly unknown[]).includes(value);
}

/** ffmpeg's input options for the path (before -i). */
export function hwaccelArgs(hwaccel: Hwaccel): string[] {
  return hwaccel === 'none' ? [] : ['-hwaccel', hwaccel];
}

/** The hwaccels auto tries, best first, per platform. */
export function autoCandidates(platform: NodeJS.Platform): Hwaccel[] {
  if (platform === 'darwin') return ['videotoolbox'];
  if (platform === 'win32') return ['d3d11va', 'cuda', 'qsv'];
  return ['cuda', 'vaapi', 'qsv'];
}

/**
 * ffmpeg's words when a hwaccel's device cannot be opened or set up for a stream (ffmpeg 5 to 7):
 * the stream is then decoded in software.
 */
const DEVICE_FAILURE =
  /Device creation failed|Device setup failed|No device available for decoder|Failed to (?:create|initialise|initialize) .*(?:device|context)|hwaccel initialisation returned error|Could not dynamically load CUDA|Cannot load libcuda/i;

export function isHwaccelFailure(stderr: string): boolean {
  return DEVICE_FAILURE.test(stderr);
}

/**
 * ffmpeg's words when the hardware decoder refuses a stream it opened (a profile, chroma format or
 * size it lacks): ffmpeg then goes on decoding that stream in software (libavcodec, ffmpeg 5 to 7).
 * Only the decoder's own line counts ("[h264 @ 0x...] ..."): the stream's metadata, which ffmpeg also
 * prints, is indented and cannot forge it.
 */
const STREAM_REFUSED =
  /^\[[\w-]+ @ 0x[0-9a-f]+\] (Failed setup for format \w+: hwaccel initiali[sz]ation returned error)/;

/** The stream's hardware decoder refused it, in the words of the line (its level tag removed); else null. */
export function hwaccelRefusal(line: string): string | null {
  return STREAM_REFUSED.exec(line)?.[1] ?? null;
}

/**
 * Which decoder ffmpeg takes for a codec, in `ffmpeg -decoders` output: the first one it lists for
 * the codec (a decoder named otherwise says "(codec <name>)"), experimental ones aside.
 */
export function defaultDecoder(decoders: string, codec: string): string | null {
  for (const line of decoders.split('\n')) {
    // " VFS..D h264   H.264 / AVC ...": type, frame and slice threads, experimental, band, direct.
    const match = /^ V..([.X]).. (\S+) .*?(?:\(codec (\S+)\))?$/.exec(line.trimEnd());
    if (match?.[1] === '.' && (match[3] ?? match[2]) === codec) return match[2] ?? null;
  }
  return null;
}

/** The hwaccels in `ffmpeg -h decoder=<name>` output ("Supported hardware devices: cuda vaapi"). */
export function decoderDevices(help: string): string[] {
  return /Supported hardware devices: (.*)/.exec(help)?.[1]?.trim().split(/\s+/) ?? [];
}

export interface CodecDecoding {
  /** The decoder ffmpeg takes for the codec; null when this ffmpeg has none. */
  decoder: string | null;
  /** The hwaccels that decoder can use. */
  hwaccels: string[];
}

const decodings = new Map<string, Promise<CodecDecoding | null>>();

/**
 * How this ffmpeg decodes a codec. ffmpeg decodes in software, saying nothing, when its decoder for
 * the stream's codec cannot use the hwaccel asked: h264 with qsv (which only ffmpeg's h264_qsv
 * decoder uses), AV1 where libdav1d comes first, a codec the build has no hardware decoder for.
 * Asked of the binary once per codec; null when ffmpeg could not be asked (asked again next time).
 */
export function codecDecoding(ffmpeg: string, codec: string): Promise<CodecDecoding | null> {
  const key = `${ffmpeg}\0${codec}`;
  let decoding = decodings.get(key);
  if (!decoding) {
    decoding = (async () => {
      const decoder = defaultDecoder(await ffmpegOutput(ffmpeg, ['-decoders']), codec);
      const hwaccels = decoder
        ? decoderDevices(await ffmpegOutput(ffmpeg, ['-h', `decoder=${decoder}`]))
        : [];
      return { decoder, hwaccels };
    })().catch(() => {
      decodings.delete(key);
      return null;
    });
    decodings.set(key, decoding);
  }
  return decoding;
}

function ffmpegOutput(ffmpeg: string, args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    execFile(ffmpeg, ['-hide_banner', ...args], { timeout: PROBE_TIMEOUT_MS }, (error, stdout) =>
      error ? fail(error) : done(stdout),
    );
  });
}

export interface ResolvedHwaccel {
  setting: HwaccelSetting;
  /** The path streams start on. */
  hwaccel: Hwaccel;
  /** Why it is not what the setting asked (auto: why no hardware path was found); null when it is. */
  fallback: string | null;
}

/**
 * Whether the hwaccel's device opens: ffmpeg decodes one generated frame with it. The generated
 * frame is raw video, which no hwaccel decodes, but ffmpeg opens the device first and fails there
 * when it is missing. Resolves with ffmpeg's last error line, or null when the device opened.
 */
export function probeHwaccel(ffmpeg: string, hwaccel: Hwaccel): Promise<string | null> {
  const args = [
    ...['-hide_banner', '-nostdin', '-loglevel', 'error', ...hwaccelArgs(hwaccel)],
    ...['-f', 'lavfi', '-i', 'color=size=64x64:rate=1', '-frames:v', '1', '-f', 'null', '-'],
  ];
  return new Promise((done) => {
    execFile(ffmpeg, args, { timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      const lines = stderr.trim().split('\n');
      done(error ? (lines.at(-1) || error.message).trim() : null);
    });
  });
}

/**
 * The path streams start on. An explicit hwaccel is kept as asked when its device opens, and
 * otherwise replaced by software from the start (each stream would fail on it anyway); auto takes
 * the first candidate whose device opens.
 */
export async function resolveHwaccel(
  setting: HwaccelSetting,
  ffmpeg: string,
  platform: NodeJS.Platform = process.platform,
  probe: (hwaccel: Hwaccel) => Promise<string | null> = (hwaccel) => probeHwaccel(ffmpeg, hwaccel),
): Promise<ResolvedHwaccel> {
  if (setting === 'none') return { setting, hwaccel: 'none', fallback: null };
  const candidates = setting === 'auto' ? autoCandidates(platform) : [setting];
  const failures: string[] = [];
  for (const candidate of candidates) {
    const failure = await probe(candidate);
    if (failure === null) return { setting, hwaccel: candidate, fallback: null };
    failures.push(`${candidate}: ${failure}`);
  }
  return { setting, hwaccel: 'none', fallback: `software decoding (${failures.join('; ')})` };
}

/**
 * One stream's decode path: the resolved one until its hardware path fails, then software for the
 * rest of the stream's life.
 */
export class DecodePath {
  private current: Hwaccel;
  private reason: string | null;

  constructor(resolved: ResolvedHwaccel) {
    this.current = resolved.hwaccel;
    this.reason = resolved.fallback;
  }

  get hwaccel(): Hwaccel {
    return this.current;
  }

  /** Why the stream does not decode as the setting asked; null when it does. */
  get fallback(): string | null {
    return this.reason;
  }

  /**
   * Reads the stderr of an ffmpeg of the stream that ended, started on `startedOn`. True when it
   * failed on that hardware path: the stream is then decoded in software, and the caller may retry
   * at once (also when a 'software' event already moved the stream to software while it ran).
   */
  fellBack(stderr: string, lastError: string, startedOn: Hwaccel): boolean {
    if (startedOn === 'none' || !isHwaccelFailure(stderr)) return false;
    this.decodesInSoftware(lastError || 'device error');
    return true;
  }

  /** A running ffmpeg of the stream decodes it in software (FrameSource's 'software' event), for the reason. */
  decodesInSoftware(why: string): void {
    if (this.current === 'none') return;
    this.reason = `${this.current} failed (${why}); software decoding`;
    this.current = 'none';
  }
}
