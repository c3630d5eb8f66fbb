const MiB = 1024 * 1024;

/** How a run picks hard samples, judges tracks and bounds what it stores (docs/api.md, 4.13). */
export const OPTIMIZATION_LIMITS = {
  /** max_samples when the request gives none. */
  defaultMaxSamples: 500,
  /** A detection whose score lies within this distance of its class threshold is a hard sample. */
  band: 0.15,
  /** Least frame time between two samples of one app for the same recurring reason (near threshold, toggles). */
  spacingMs: 1_000,
  /** A track seen in at most this many analysed frames, then gone, flickered. */
  flickerMaxSightings: 3,
  /** Unseen for this many analysed frames: the track counts as vanished (its sample is taken). */
  vanishFrames: 3,
  /** Seen in at least this many analysed frames: the track is stable (likely a real object). */
  stableMinSightings: 10,
  /** Unseen for more than this many analysed frames: the tracker has let it go; its life is final. */
  forgetFrames: 30,
  /** Samples waiting to be encoded and written; more are dropped, never waited for. */
  queue: 4,
  /** A run stores no more sample images once they take this much. */
  runBytes: 256 * MiB,
  /** Nor while the data folder's disk has less than this free. */
  minFreeBytes: 256 * MiB,
  /** An operator's verdict weighs as much as this many tracks. */
  verdictWeight: 2,
  /** The statistics of a running run are saved every this many analysed frames (and at its end). */
  statsEveryFrames: 50,
  /** Proposed thresholds are searched in [min, max] in steps of 0.01, so they always lie inside (0, 1). */
  proposalMin: 0.05,
  proposalMax: 0.95,
  jpegQuality: 90,
  thumbWidth: 320,
} as const;
