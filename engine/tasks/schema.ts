import { type Static, Type } from '@sinclair/typebox';
import { TaskHealth } from '../contract/health';
import { LineCounts, ZoneOccupancy } from '../rules/counts';
import { RuleOverride } from '../rules/override';
import { oneOf } from '../schema/ajv';
import { Name, SafeText } from '../schema/text';
import { TASK_AREA_LIMITS, TASK_GPU, TASK_GPU_DEFAULT, TASK_PAGE_LIMIT, TASK_PRIORITY } from './limits';

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });
const Text = (description: string) => Type.String({ maxLength: 256, description });
/** A task's name as operators see it: printable, not blank (task-name.ts trims it). */
const TaskName = Name({
  minLength: 1,
  maxLength: 64,
  description: 'Extension: what operators call the task; default its device_id, else its source',
});

/** Most frames a video task analyses per second (extension); the engine's analysis_fps when absent. */
export const AnalysisFps = Type.Number({
  minimum: 0.1,
  maximum: 60,
  description: "Extension: most frames analysed per second; default the engine's analysis_fps setting",
});

/** Which cameras a site short of room keeps (extension; cluster mode): higher first. */
export const Priority = Type.Integer({
  minimum: TASK_PRIORITY.min,
  maximum: TASK_PRIORITY.max,
  description: `Extension: in a cluster short of room, higher-priority tasks are placed first and may take the room of lower ones; default ${TASK_PRIORITY.default}`,
});

/** An operator's camera (extension): kept whatever its stream does, instead of closed after 5 min lost. */
export const Persistent = Type.Boolean({
  description:
    "Extension, video tasks: true keeps retrying a lost stream for as long as the task exists (every few seconds) instead of closing the task with close_code 2 after 5 min; default false, the contract's behaviour",
});

export const MotionGate = Type.Boolean({
  description:
    'Extension, video tasks: true (default) skips frames with nothing moving in them once nothing has moved and no object was seen for 3 s (the whole frame is still detected every 2 s), and detects every other frame as without the gate; false detects every analysed frame whole. An update takes effect from the next frame',
});

/** Detect on crops around motion and tracks instead of the whole frame (extension; the motion gate's second step). */
export const GateRegions = Type.Boolean({
  description:
    'Extension, video tasks with motion_gate: true runs the detector on crops of the full-resolution frame around motion and live tracks, which finds small, distant people the shrunk whole frame misses; false (default) detects such frames whole, since crops change boxes enough to lose some loitering and crossing alarms on busy scenes (docs/api.md, part 8). An update takes effect from the next frame',
});

/** Where a site may run the camera (extension; cluster mode): on a node with a GPU provider in use. */
export const Gpu = oneOf(TASK_GPU, {
  description: `Extension: in a cluster, required runs only on a node whose models run on a GPU, preferred on one when it has room; ${TASK_GPU_DEFAULT} unless given. A single workstation runs it on the provider it has (GET /api/system says which)`,
});

export const TaskMode = oneOf(['video', 'image', 'diff']);
export type TaskMode = Static<typeof TaskMode>;

/** osd of the update body (4.7): display_polygon is set at start only. */
export const OsdUpdate = Type.Object(
  {
    display_name: Type.Optional(Type.Boolean()),
    display_box: Type.Optional(Type.Boolean()),
    display_track: Type.Optional(Type.Boolean()),
    font_size: Type.Optional(Type.Integer({ minimum: 6, maximum: 128 })),
    border_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  },
  { additionalProperties: false },
);

/** osd of the start body (2.8). */
export const Osd = Type.Object(
  { ...OsdUpdate.properties, display_polygon: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type Osd = Static<typeof Osd>;
export const DEFAULT_OSD: Required<Osd> = {
  display_name: true,
  display_box: true,
  display_track: true,
  display_polygon: true,
  font_size: 16,
  border_size: 2,
};

const Coordinate = Type.Number({ minimum: 0, maximum: 16_384 });
export const Point = Type.Array(Coordinate, { minItems: 2, maxItems: 2 });
/** [x, y] points in source-frame pixels: 3+ points a region, exactly 2 a counting line (type 3), none the whole frame. */
export const Polygon = Type.Array(Point, { maxItems: TASK_AREA_LIMITS.pointsPerPolygon });
export type Polygon = Static<typeof Polygon>;

/** A named region of an app (extension): objects name the zones they stand in, counters count per zone. */
export const Zone = Type.Object(
  { name: Name({ minLength: 1, maxLength: 64 }), polygon: Polygon },
  { additionalProperties: false },
);
export type Zone = Static<typeof Zone>;

/** Four image points (source pixels) and where each lies on the ground, in metres: speeds and distances. */
export const Calibration = Type.Object(
  {
    image: Type.Array(Point, { minItems: 4, maxItems: 4 }),
    ground: Type.Array(
      Type.Array(Type.Number({ minimum: -100_000, maximum: 100_000 }), { minItems: 2, maxItems: 2 }),
      { minItems: 4, maxItems: 4, description: '[x, y] metres on the ground plane, in the order of image' },
    ),
  },
  {
    additionalProperties: false,
    description:
      'Extension: ground-plane calibration (a homography); no three points of either set collinear',
  },
);
export type Calibration = Static<typeof Calibration>;

/**
 * Which crossings of a counting line count (extension). Side A is left of the line drawn from its
 * first point to its second, side B right of it, as seen on the frame: 'in' counts A to B (the
 * counts' `in`), 'out' B to A, 'both' every crossing.
 */
export const LineDirection = Type.Union([Type.Literal('in'), Type.Literal('out'), Type.Literal('both')], {
  description:
    "Extension: the crossings of a counting line (polygon of 2 points) that fire and count: 'in' from side A (left of the line from its first point to its second, on the frame) to side B, 'out' from B to A, 'both' (default) either way",
});
export type LineDirection = Static<typeof LineDirection>;

/** Where an app looks: the contract's polygon, and the extensions' named zones and exclusion masks. */
export const AppAreas = Type.Object({
  polygon: Polygon,
  line_direction: Type.Optional(LineDirection),
  zones: Type.Optional(
    Type.Array(Zone, {
      maxItems: TASK_AREA_LIMITS.zonesPerApp,
      description: 'Extension: named regions (3+ points), names unique',
    }),
  ),
  masks: Type.Optional(
    Type.Array(Polygon, {
      maxItems: TASK_AREA_LIMITS.masksPerApp,
      description: 'Extension: regions (3+ points) where nothing counts for any rule of the app',
    }),
  ),
  calibration: Type.Optional(Calibration),
});
export type AppAreas = Static<typeof AppAreas>;

export const AppConfig = Type.Object(
  { app_id: Id('Application the polygon belongs to'), ...AppAreas.properties },
  { additionalProperties: false },
);
export type AppConfig = Static<typeof AppConfig>;

/** An app's areas in an update (4.7): as at start, where calibration null removes the one it has. */
export const AppConfigUpdate = Type.Object(
  {
    ...AppConfig.properties,
    calibration: Type.Optional(
      Type.Union([Calibration, Type.Null()], {
        description: 'Extension: null removes the calibration; left out, the one the app has is kept',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AppConfigUpdate = Static<typeof AppConfigUpdate>;

/** Per app of a video task, this camera's overrides of the app's rule (extension, engine/rules/override.ts). */
export const RuleOverrides = Type.Record(Type.String(), RuleOverride, {
  maxProperties: 64,
  description:
    "Extension, video tasks: per app_id of the task, this camera's values of the app's rule laid over it; the app's rule stays every other camera's, and its later edits reach this one in every field not overridden",
});
export type RuleOverrides = Static<typeof RuleOverrides>;

const AppIds = Type.Array(Id('Application id'), { minItems: 1, maxItems: 64, uniqueItems: true });
const AppConfigs = Type.Array(AppConfig, { maxItems: 64 });

export const StartTaskBody = Type.Object(
  {
    mode: Type.Optional(TaskMode),
    name: Type.Optional(TaskName),
    analysis_fps: Type.Optional(AnalysisFps),
    priority: Type.Optional(Priority),
    persistent: Type.Optional(Persistent),
    motion_gate: Type.Optional(MotionGate),
    gate_regions: Type.Optional(GateRegions),
    gpu: Type.Optional(Gpu),
    zapk_id: Id('Application package id'),
    app_ids: AppIds,
    device_id: Type.Optional(
      SafeText({
        maxLength: 256,
        description: 'Device identifier; the task is known by it when it has no name',
      }),
    ),
    business_id: Type.Optional(Text('Echoed as business_id in callbacks')),
    video_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'rtsp://, rtmp://, http(s)://, file:// or an absolute path',
      }),
    ),
    analysis_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          "Extension, video tasks: the camera's lower-resolution sub-stream, decoded and analysed instead of video_url (same schemes and checks); video_url stays the main stream that clips, the AI video and every coordinate are of",
      }),
    ),
    osd: Type.Optional(Osd),
    app_configs: Type.Optional(AppConfigs),
    rule_overrides: Type.Optional(RuleOverrides),
    report_url: Type.Optional(
      Type.String({ maxLength: 2048, description: 'http(s) URL the callbacks are POSTed to' }),
    ),
    report_secret: Type.Optional(
      Type.String({
        minLength: 16,
        maxLength: 256,
        description:
          'Extension: when set, callbacks carry an HMAC-SHA256 signature made with it (never listed)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type StartTaskBody = Static<typeof StartTaskBody>;

export const UpdateTaskBody = Type.Object(
  {
    name: Type.Optional(TaskName),
    analysis_fps: Type.Optional(
      Type.Union([AnalysisFps, Type.Null()], { description: "null: the engine's setting again" }),
    ),
    priority: Type.Optional(Priority),
    persistent: Type.Optional(Persistent),
    motion_gate: Type.Optional(MotionGate),
    gate_regions: Type.Optional(GateRegions),
    gpu: Type.Optional(Gpu),
    app_ids: Type.Optional(AppIds),
    osd: Type.Optional(OsdUpdate),
    app_configs: Type.Optional(Type.Array(AppConfigUpdate, { maxItems: 64 })),
    rule_overrides: Type.Optional(
      Type.Record(Type.String(), Type.Union([RuleOverride, Type.Null()]), {
        maxProperties: 64,
        description:
          "Extension, video tasks: per app_id, the app's override as a whole (replacing the one it had); null or {} removes it, apps left out keep theirs",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateTaskBody = Static<typeof UpdateTaskBody>;

export const TaskStatus = Type.Union([
  Type.Literal('starting'),
  Type.Literal('running'),
  Type.Literal('stream_lost'),
  Type.Literal('closed'),
]);
export type TaskStatus = Static<typeof TaskStatus>;

/** A task as GET /api/task/{task_id} shows it: 2.7 plus extensions (status, app_configs, times). */
export const TaskView = Type.Object({
  task_id: Type.String({ format: 'uuid' }),
  name: Type.String({ description: 'Extension: the given name, else the device_id, else from the source' }),
  mode: TaskMode,
  analysis_fps: Type.Union([Type.Number(), Type.Null()], {
    description:
      "Extension: most frames analysed per second, the task's own or else the engine's; null for image and diff tasks",
  }),
  priority: Type.Integer({
    description: `Extension: its priority in a cluster short of room (higher placed first); ${TASK_PRIORITY.default} unless given`,
  }),
  persistent: Type.Boolean({
    description:
      'Extension: whether a lost stream is retried for as long as the task exists (never close_code 2); false for image and diff tasks',
  }),
  motion_gate: Type.Boolean({
    description:
      'Extension: whether frames with nothing moving in them are skipped once the scene is still (true, the default for video tasks) or every analysed frame is detected whole; false for image and diff tasks',
  }),
  gate_regions: Type.Boolean({
    description:
      'Extension: whether the motion gate detects on crops around motion and tracks (true) or such frames whole (false, the default); false for image and diff tasks',
  }),
  gpu: oneOf(TASK_GPU, {
    description: `Extension: its GPU constraint in a cluster (required, preferred or none); ${TASK_GPU_DEFAULT} unless given`,
  }),
  zapk_id: Type.String(),
  app_ids: Type.Array(Type.String()),
  device_id: Type.String(),
  business_id: Type.String(),
  video_url: Type.String(),
  analysis_url: Type.Union([Type.String(), Type.Null()], {
    description: 'Extension: the sub-stream analysed instead of video_url; null when the task has none',
  }),
  report_url: Type.String(),
  osd: Osd,
  close_code: Type.Integer({
    description:
      '0 running; 1 closed by caller; 2 stream not restored in 5 min; 3 no image for 5 min; 4 license expired; 5 engine error',
  }),
  dump: Type.String({ description: 'Short health line of the task' }),
  health: TaskHealth,
  status: TaskStatus,
  rule_overrides: Type.Record(Type.String(), RuleOverride, {
    description:
      "Extension: per app_id, this camera's overrides of the app's rule ({} when none; always {} for image and diff tasks)",
  }),
  app_configs: Type.Array(AppConfig),
  created_at: Type.Integer({ description: 'ms since the Unix epoch' }),
  closed_at: Type.Union([Type.Integer(), Type.Null()]),
});
export type TaskView = Static<typeof TaskView>;

/**
 * A task as the listing (4.5) shows it by default: every field but app_configs, the heavy one; on a
 * node of a cluster, with the node that runs it (extensions, absent on a single workstation).
 */
export const TaskSummary = Type.Object({
  ...Type.Omit(TaskView, ['app_configs']).properties,
  node: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        'Extension, cluster mode: the node that runs the task; null when none does (closed, or not placed yet)',
    }),
  ),
  node_answered: Type.Optional(
    Type.Boolean({
      description:
        'Extension, cluster mode: false when that node did not answer in time; status and health are then as the site last stored them (dump says so), not live',
    }),
  ),
});
export type TaskSummary = Static<typeof TaskSummary>;

/** An element of the listing: app_configs only when asked for (with_areas). */
export const TaskListItem = Type.Object({
  ...TaskSummary.properties,
  app_configs: Type.Optional(TaskView.properties.app_configs),
});
export type TaskListItem = Static<typeof TaskListItem>;

/** Paging and filters of the listing (extension): with none, the first page of every listed task. */
export const TaskListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: TASK_PAGE_LIMIT,
        description: `Tasks on the page; default and most ${TASK_PAGE_LIMIT}`,
      }),
    ),
    offset: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Tasks skipped first; default 0' }),
    ),
    state: Type.Optional(
      oneOf(['running', 'closed'], {
        description: 'running: close_code 0 (status starting, running or stream_lost); closed: the others',
      }),
    ),
    mode: Type.Optional(TaskMode),
    with_areas: Type.Optional(
      Type.Boolean({
        description: "Include each task's app_configs (polygons, zones, masks); default false",
      }),
    ),
  },
  { additionalProperties: false },
);
export type TaskListQuery = Static<typeof TaskListQuery>;

/** GET /api/task/{task_id}/counts (extension): each app's counting line and zones, null without them. */
export const TaskCounts = Type.Object({
  task_id: Type.String({ format: 'uuid' }),
  apps: Type.Array(
    Type.Object({
      app_id: Type.String(),
      line: Type.Union([LineCounts, Type.Null()], {
        description: 'Crossings since analysis started; null for an app without a counting line',
      }),
      zones: Type.Union([ZoneOccupancy, Type.Null()], {
        description: 'Objects in each zone after the last analysed frame; null for an app without zones',
      }),
    }),
  ),
});
export type TaskCounts = Static<typeof TaskCounts>;

export const CLOSE_CODE = {
  running: 0,
  byCaller: 1,
  streamLost: 2,
  noImage: 3,
  licenseExpired: 4,
  engineError: 5,
} as const;
export type CloseCode = (typeof CLOSE_CODE)[keyof typeof CLOSE_CODE];
