import { DEFAULT_MAX_SOURCE_PIXELS } from './source-pixels';
import { formatWhitelist, type SourceKind } from './source-url';

export { DEFAULT_MAX_SOURCE_PIXELS };

/**
 * ffmpeg input options that bound what a source can make it do: only video demuxers, and decoders
 * that refuse a frame beyond the pixel cap before allocating it (`-max_pixels` is a codec option, so
 * it holds for the stream analysis that picks the input's parameters too).
 */
export function sourceLimitArgs(kind: SourceKind, maxPixels = DEFAULT_MAX_SOURCE_PIXELS): string[] {
  return ['-format_whitelist', formatWhitelist(kind), '-max_pixels', String(maxPixels)];
}

/** A source whose frames are larger than the engine's cap: refused, never decoded. */
export class SourceTooLargeError extends Error {
  constructor(
    readonly width: number,
    readonly height: number,
    readonly maxPixels: number,
  ) {
    super(
      `the source's frames are ${width}x${height} (${megapixels(width * height)} megapixels); ` +
        `the engine accepts at most ${maxPixels} pixels (${megapixels(maxPixels)} megapixels) per frame`,
    );
  }
}

/** A source ffmpeg reads as a format the engine refuses (text, images, playlists of files): not video. */
export class SourceNotVideoError extends Error {
  constructor(readonly format: string) {
    super(`it is not video: ffmpeg reads it as "${format}", a format the engine refuses`);
  }
}

const megapixels = (pixels: number) => (pixels / 1e6).toFixed(1);

// "[h264 @ 0x..] [IMGUTILS @ 0x..] [error] Picture size 7680x4320 exceeds specified max pixel count 8847360, ..."
const TOO_LARGE = /Picture size (\d+)x(\d+) exceeds specified max pixel count (\d+)/;
// "[tty @ 0x..] [error] Format not on whitelist 'mov,...'": the demuxer ffmpeg picked leads the line.
const NOT_VIDEO = /^\[([^\] ]+) @ [^\]]*\] (?:\[\w+\] )?Format not on whitelist/;

/**
 * Why ffmpeg refused a source, from one of its stderr lines: a frame beyond the pixel cap, or a
 * format that is not video. Null for any other line. ffmpeg's own last words ("Invalid argument")
 * would not say which.
 */
export function sourceRefusal(line: string): Error | null {
  const large = TOO_LARGE.exec(line);
  if (large) return new SourceTooLargeError(Number(large[1]), Number(large[2]), Number(large[3]));
  const format = NOT_VIDEO.exec(line);
  if (format?.[1]) return new SourceNotVideoError(format[1]);
  return null;
}
