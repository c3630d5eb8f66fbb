/**
 * The size frames leave ffmpeg at for analysis, by default. The detectors take at most 640x640 and
 * the AI video is 720p, so more pixels only cost copying: a 4K rgb24 frame is 25 MB, bounded to
 * 1280x720 it is 2.8 MB. Everything reported stays in the source's pixels; the pipeline maps back
 * once. The engine setting analysis_size trades the snapshots' and AI video's detail for CPU.
 */
export const MAX_FRAME_SIDE = 1280;
/** The longest side the analysis_size setting may name. */
export const ANALYSIS_SIZE_RANGE = { min: 320, max: 3840 } as const;

/** A picture's size in pixels. */
export interface PixelSize {
  width: number;
  height: number;
}

/**
 * ffmpeg's filters to at most `side` pixels a side (MAX_FRAME_SIDE unless the engine says), keeping the aspect, never upscaling, ending in
 * a format the output's rgb24 converts from. The resize stays in planar YUV and the conversion to RGB
 * comes after it at the smaller size: swscale resizing and converting at once costs a 1080p camera
 * about 3.8 ms a frame, this about 1.7 ms (ffmpeg -threads 1, one core).
 */
export function boundingScaleFilter(side = MAX_FRAME_SIDE): string {
  const bounded = `w='min(iw,${side})':h='min(ih,${side})':force_original_aspect_ratio=decrease`;
  // The second scale only converts; fast_bilinear is the cheapest chroma upsampling, as before.
  return `scale=${bounded}:flags=bilinear,format=yuv420p,scale=flags=fast_bilinear`;
}

/** The size boundingScaleFilter() gives a source of this size (ffmpeg's own arithmetic). */
export function boundedSize(source: PixelSize, side = MAX_FRAME_SIDE): PixelSize {
  const w = Math.min(source.width, side);
  const h = Math.min(source.height, side);
  return {
    width: Math.min(w, Math.round((h * source.width) / source.height)),
    height: Math.min(h, Math.round((w * source.height) / source.width)),
  };
}

/**
 * The source size a decoded frame shows: the size ffmpeg described for the input when the frame is
 * that size bounded; else the frame's own (a frame within the bound was not scaled; a size change
 * ffmpeg did not describe is taken as it comes).
 */
export function sourceSizeOf(
  frame: PixelSize,
  described: PixelSize | null,
  side = MAX_FRAME_SIDE,
): PixelSize {
  if (described) {
    const bounded = boundedSize(described, side);
    if (bounded.width === frame.width && bounded.height === frame.height) return described;
  }
  return { width: frame.width, height: frame.height };
}
