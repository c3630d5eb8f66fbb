/** Timers of part 3 and part 8 of the contract, plus the engine's own retention and retry bounds. */
export const TASK_LIMITS = {
  /** A video source must give its first frame within this at task start. */
  pullTimeoutMs: 15_000,
  /** A video task whose stream is not restored within this closes with close_code 2. */
  streamLossCloseMs: 5 * 60_000,
  /** Images of image and diff tasks: at least this far apart... */
  minImageIntervalMs: 1_000,
  /** ...and the task closes with close_code 3 when none arrives for longer than this. */
  imageIdleCloseMs: 5 * 60_000,
  /** Closed tasks stay listed this long (api-decisions.md). */
  closedRetentionMs: 24 * 60 * 60_000,
  /** A task resumed this many times in a row into an engine that then died is closed (code 5) instead. */
  maxUncleanResumes: 3,
  /** ...where a resumed task that lives this long with the engine starts its count afresh. */
  resumeHealthyMs: 5 * 60_000,
} as const;

/**
 * A task's priority (extension; cluster mode): when a site's nodes cannot hold every camera, those of
 * higher priority are placed first and may take the room of lower ones (engine/cluster/placement.ts).
 */
export const TASK_PRIORITY = { min: 0, max: 100, default: 50 } as const;

/**
 * A video task's GPU constraint (extension; cluster mode): required runs only on a node whose models
 * run on a GPU provider, preferred goes to such a node when one has room, none places it by load alone.
 */
export const TASK_GPU = ['none', 'preferred', 'required'] as const;
export type TaskGpu = (typeof TASK_GPU)[number];
/** A task that names no GPU constraint: placed as before GPU constraints existed. */
export const TASK_GPU_DEFAULT: TaskGpu = 'none';

/** Frames a video task analyses per second when neither it nor the engine's settings say. */
export const DEFAULT_ANALYSIS_FPS = 10;

/**
 * What one task may carry (docs/security.md): bounds no operator's drawing reaches (a hand-drawn
 * region rarely has 100 points) that keep a stored task in the tens of KB, so that listing and
 * resuming tasks stays cheap. Over them, start and update answer 40001 naming the field.
 */
export const TASK_AREA_LIMITS = {
  /** Points of one polygon, zone or mask. */
  pointsPerPolygon: 256,
  /** Zones of one application's config, and masks likewise. */
  zonesPerApp: 32,
  masksPerApp: 32,
  /** Polygons, zones and masks with points, over all the task's applications. */
  polygonsPerTask: 128,
  /** Their points together. */
  pointsPerTask: 2048,
  /** Bytes of a start or update body (413 beyond), against 1 MiB for other JSON bodies. */
  bodyBytes: 64 * 1024,
} as const;

/**
 * Bytes of a task's rule overrides as stored (JSON): they are listed with the task, so they stay
 * small whatever the app's rule holds (a page of 100 tasks carries at most 800 KB of them).
 */
export const RULE_OVERRIDES_BYTES = 8 * 1024;

/** Tasks on one page of GET /api/tasks: the default and the most a caller may ask for. */
export const TASK_PAGE_LIMIT = 100;
