import { join } from 'node:path';

/**
 * Where a source's own stream is kept as it arrives, for clips (issue 35): the decoding ffmpeg copies
 * the packets of its video stream into short MPEG-TS segments beside decoding them, so a camera is
 * read once and nothing is decoded again or re-encoded (measured: about 0.25% of one core for a
 * 1080p25 H.264 camera on top of reading it). Segments close on keyframes only, so any run of them
 * plays from its start. Each ffmpeg run writes segments and a list of its own, named by its run.
 */
export interface SegmentTarget {
  /** The task's buffer directory. */
  dir: string;
  /** Seconds a segment lasts at least (it closes at the next keyframe after that). */
  segmentS: number;
  /**
   * Probe a network stream fully (ffmpeg's own analyzeduration) instead of quick-start.ts's half
   * second: the segment muxer cannot start without the stream's size, which a source whose
   * parameters come only with its keyframes gives later than that.
   */
  fullProbe?: boolean;
}

/** The list ffmpeg appends a line to as each segment of `run` closes: "file,start,end". */
export const segmentListOf = (dir: string, run: number) => join(dir, `${run}.csv`);

/** The name of the `index`th segment of `run` (from 0), as segmentOutputArgs has ffmpeg write it. */
export const segmentNameOf = (run: number, index: number) => `${run}-${String(index).padStart(6, '0')}.ts`;

/** ffmpeg output arguments (after its input) that copy the first video stream into segments. */
export function segmentOutputArgs({ dir, segmentS }: SegmentTarget, run: number): string[] {
  return [
    ...['-map', '0:v:0', '-c:v', 'copy', '-an', '-sn', '-dn'],
    ...['-f', 'segment', '-segment_time', String(segmentS), '-segment_format', 'mpegts'],
    // csv: one line per closed segment; live: written as each closes, not at the end.
    ...['-segment_list', segmentListOf(dir, run), '-segment_list_type', 'csv'],
    ...['-segment_list_flags', '+live'],
    join(dir, `${run}-%06d.ts`),
  ];
}
