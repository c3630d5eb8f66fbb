/**
 * The sizes an AI video is encoded at. A caller that shows it small (a tile of the console's wall)
 * asks for a width; the video is then scaled down to the highest step not above it (aspect kept,
 * even), at a lower rate: a 640 px tile costs a fraction of the full-size encoder, so a 4x4 wall of
 * annotated videos fits a workstation (bench:wall). Requests on one step share an encoder, so a task
 * has at most as many scaled sizes as there are steps, each bounded like any other AI video.
 */
export const WIDTH_STEPS_PX = [320, 480, 640, 960, 1280] as const;

/** Frames per second of a scaled video, at most: enough for a tile, a third of a camera's 25-30. */
export const SCALED_MAX_FPS = 10;

export interface VideoSize {
  width: number;
  height: number;
  fps: number;
}

/**
 * The step a requested width is encoded at for a source of `sourceWidth` px: null (full size) when
 * none is asked or the step would not be smaller than the source; else the highest step not above
 * the request (the lowest step below that).
 */
export function widthStep(requestedPx: number | undefined, sourceWidth: number): number | null {
  if (requestedPx === undefined) return null;
  let step: number = WIDTH_STEPS_PX[0];
  for (const candidate of WIDTH_STEPS_PX) if (candidate <= requestedPx) step = candidate;
  return step < sourceWidth ? step : null;
}

/** The encoded size and rate of a source's video at a width step (null: the source's own). */
export function videoSize(source: VideoSize, step: number | null): VideoSize {
  if (step === null) return source;
  const height = Math.max(2, Math.round((source.height * step) / source.width / 2) * 2);
  return { width: step, height, fps: Math.min(source.fps, SCALED_MAX_FPS) };
}
