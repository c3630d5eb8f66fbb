import { formatWhitelist, type SourceKind } from './source-url';

/** ffmpeg input options that bound what a source can make it do: only video demuxers. */
export function sourceLimitArgs(kind: SourceKind): string[] {
  return ['-format_whitelist', formatWhitelist(kind)];
}

// "[tty @ 0x..] [error] Format not on whitelist 'mov,...'": the demuxer ffmpeg picked leads the line.
const NOT_VIDEO = /^\[([^\] ]+) @ [^\]]*\] (?:\[\w+\] )?Format not on whitelist/;

/**
 * Why ffmpeg refused a source, from one of its stderr lines: a format that is not video. Null for
 * any other line. ffmpeg's own last words ("Invalid argument") would not say which.
 */
export function sourceRefusal(line: string): Error | null {
  const format = NOT_VIDEO.exec(line);
  if (format)
    return new Error(`it is not video: ffmpeg reads it as "${format[1]}", a format the engine refuses`);
  return null;
}
