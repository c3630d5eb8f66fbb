/**
 * Most pixels a source's frames may have unless the engine is told otherwise: DCI 4K (4096x2160),
 * which every 4K UHD camera (3840x2160) fits. One such frame is 26.5 MB as RGB; an 8K stream took
 * the engine to 3.5 GB and a 15872x15872 MJPEG killed it. A constant of its own, free of Node, so
 * that the configuration schema (engine/config/schema.ts) can state it as its default.
 */
export const DEFAULT_MAX_SOURCE_PIXELS = 4096 * 2160;

/** The most the setting may name: ffmpeg's -max_pixels takes 0..INT_MAX, and refuses every source beyond. */
export const MAX_SOURCE_PIXELS_SETTING = 2 ** 31 - 1;
