/**
 * Input options for a reader that needs the picture soon rather than a full stream analysis: ffmpeg
 * otherwise reads up to 5 s of a network stream (analyzeduration) before its first frame. A probe and
 * a preview need no more, nor does a task's own reader of a network source (the rate it takes is the
 * one the stream's header describes). A task's start is what a camera moved to another node waits
 * for: on an RTMP camera behind nginx, 5.4 s to the first frame without these options, 1.0-1.5 s
 * with them (measured with ffmpeg alone on this project's machine).
 */
export const QUICK_START_ARGS = ['-analyzeduration', '500000', '-probesize', '1000000'];
