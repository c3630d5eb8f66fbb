import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ClipUsage } from '../clips/clip-schema';

/**
 * Health as typed figures (extension). The console, tests and other programs read these; the task's
 * `dump` line is rendered from them for people and is never parsed.
 */

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Rate = (description: string) => Type.Number({ minimum: 0, description });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** The source reader's state: idle -> connecting -> running -> stalled -> reconnecting -> ...; closed. */
export const StreamState = Type.Union([
  Type.Literal('idle'),
  Type.Literal('connecting'),
  Type.Literal('running'),
  Type.Literal('stalled'),
  Type.Literal('reconnecting'),
  Type.Literal('closed'),
]);
export type StreamState = Static<typeof StreamState>;

/**
 * A running video task's sub-stream (its analysis_url, issue 36): what it delivers and which stream
 * analysis reads. `stream` above stays the task's stream as analysed, in the main stream's size.
 */
export const SubStreamHealth = Type.Object(
  {
    state: Type.Union([Type.Literal('running'), Type.Literal('lost')]),
    width: Nullable(
      Type.Integer({ minimum: 1, description: "The sub-stream's own width; null before its first frame" }),
    ),
    height: Nullable(Type.Integer({ minimum: 1, description: "The sub-stream's own height" })),
    fps: Nullable(Type.Number({ minimum: 0, description: 'Frames per second it delivers; null while lost' })),
    aspect_mismatch: Type.Boolean({
      description:
        "Its aspect differs from the main stream's by more than 2%: boxes are mapped per axis, so the picture's geometry is stretched",
    }),
    analysing: Type.Union([Type.Literal('sub_stream'), Type.Literal('main_stream')], {
      description:
        'Which stream analysis reads: main_stream while the sub-stream is lost (the fallback) or an AI video of the task is watched',
    }),
    last_error: Nullable(Type.String({ description: "The sub-stream's last error" })),
    main: Type.Object(
      {
        state: Type.Union([Type.Literal('running'), Type.Literal('lost')], {
          description:
            'running while the main stream is read (copied into clips); lost from a drop until it is read again',
        }),
        drops: Type.Integer({
          minimum: 0,
          description:
            'Times the main stream ended on its own since the task started: each leaves a gap in its clips',
        }),
        last_error: Nullable(Type.String({ description: 'Why it last ended on its own; null until it did' })),
      },
      {
        additionalProperties: false,
        description:
          "The main stream beside it, which analysis does not read while the sub-stream runs: its drops show here, the task's stream and events going on",
      },
    ),
  },
  {
    additionalProperties: false,
    description:
      'Extension: the sub-stream of a task with analysis_url; null for tasks without one, image and diff tasks and closed tasks',
  },
);
export type SubStreamHealth = Static<typeof SubStreamHealth>;

/** The engine setting for video decoding: an ffmpeg hwaccel, auto, or none (software). */
export const HWACCELS = ['auto', 'none', 'vaapi', 'cuda', 'qsv', 'videotoolbox', 'd3d11va'] as const;
export type HwaccelSetting = (typeof HWACCELS)[number];
/** A decode path in use: a hwaccel, or none for software. */
export type Hwaccel = Exclude<HwaccelSetting, 'auto'>;
const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((value) => Type.Literal(value)));
const HwaccelInUse = literals(HWACCELS.filter((value): value is Hwaccel => value !== 'auto'));
const Fallback = Type.Union([Type.String(), Type.Null()], {
  description: 'Why decoding is not on the path the setting asked for; null when it is',
});

/** A supervised ffmpeg (an AI video's encoder or push): restarted with backoff when it fails. */
export const FfmpegHealth = Type.Object(
  {
    state: Type.Union([
      Type.Literal('idle'),
      Type.Literal('connecting'),
      Type.Literal('live'),
      Type.Literal('retrying'),
      Type.Literal('stopped'),
    ]),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt ended' }),
    retry_in_s: Nullable(Type.Integer({ minimum: 0, description: 'Seconds to the next try while retrying' })),
  },
  { additionalProperties: false },
);
export type FfmpegHealth = Static<typeof FfmpegHealth>;

export const AiVideoPushHealth = Type.Object(
  {
    url: Type.String({ description: 'Push target without its stream key' }),
    ffmpeg: FfmpegHealth,
  },
  { additionalProperties: false },
);
export type AiVideoPushHealth = Static<typeof AiVideoPushHealth>;

/** One annotated live stream of a task (one per set of apps shown). */
export const AiVideoHealth = Type.Object(
  {
    app_ids: Type.Array(Type.String()),
    width: Count('Encoded width in pixels'),
    height: Count('Encoded height in pixels'),
    fps: Rate('Encoded frame rate'),
    bitrate_kbps: Count('Target bitrate'),
    viewers: Count('Viewers of the console HLS stream'),
    encoder: FfmpegHealth,
    frames_written: Count('Frames handed to the encoder'),
    frames_dropped: Count('Frames dropped because the encoder was behind'),
    osd_error: Type.Union([Type.String(), Type.Null()]),
    pushes: Type.Array(AiVideoPushHealth),
  },
  { additionalProperties: false },
);
export type AiVideoHealth = Static<typeof AiVideoHealth>;

/**
 * A task's health. For a video task every figure is live while it runs; for image and diff tasks and
 * closed tasks `stream` is null and the counters are what was stored.
 */
/** The motion gate of a video task (issue 36): what its detector was spared. */
export const GateHealth = Type.Object(
  {
    enabled: Type.Boolean({
      description:
        'motion_gate as the analysis runs it (false while the task does not run, and for tasks whose models cannot run on regions)',
    }),
    resting: Type.Boolean({
      description: 'Nothing moved and no track was seen for 3 s: frames without motion are skipped whole',
    }),
    rate_fps: Rate('Frames per second that reached the detector or the tracker (last 5 s)'),
    frames_skipped: Count('Frames the gate passed over whole (resting: no motion, no track, no refresh due)'),
    frames_regions: Count('Frames detected on regions around motion and live tracks only'),
    frames_full: Count(
      'Frames detected in full (gate off, the 2 s refresh, motion warming up, too much motion)',
    ),
    detector_runs_per_s: Rate('Model inferences per second, tiles and full frames (last 5 s)'),
    refresh_s: Type.Number({
      minimum: 0,
      description:
        'Seconds between whole-frame refreshes now: 2, growing to 8 while the task rests with no track at all (0 when the gate is off)',
    }),
    area_fraction: Type.Number({
      minimum: 0,
      maximum: 1,
      description: "Mean share of the frame's area the detector saw per frame looked at (last 5 s)",
    }),
  },
  { additionalProperties: false },
);
export type GateHealth = Static<typeof GateHealth>;

export const TaskHealth = Type.Object(
  {
    stream: Type.Union([
      Type.Object(
        {
          state: StreamState,
          width: Nullable(
            Type.Integer({ minimum: 0, description: 'Source width in pixels; null before the first frame' }),
          ),
          height: Nullable(Type.Integer({ minimum: 0, description: 'Source height in pixels' })),
          fps: Rate(
            "Frames per second the source delivers (ffmpeg's count of decoded frames, before the analysis rate drops any)",
          ),
          reconnects: Count('Reconnections since the task started'),
          black_frames: Count('Black frames filled in while the stream was lost'),
          last_error: Type.Union([Type.String(), Type.Null()], { description: "The reader's last error" }),
          full_rate: Type.Boolean({
            description:
              'Whether the source is read at its full rate (for an AI video) or at the analysis rate',
          }),
          rate_switch_error: Type.Union([Type.String(), Type.Null()], {
            description: 'Why the switch to full rate failed (the AI video then runs at the analysis rate)',
          }),
          decoder: Type.Object(
            { hwaccel: HwaccelInUse, fallback: Fallback },
            { additionalProperties: false, description: 'The decode path of the stream now' },
          ),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    overloaded: Type.Boolean({
      description:
        'True while the engine is too starved for CPU to keep up (its event loop ran 1 s late, a stream went quiet while it was late, or an inference host was starved, within the last 10 s): analysis sheds frames, and a stream is not counted lost for frames the engine could not read. Always false for image and diff tasks and closed tasks',
    }),
    overload: Type.Union([Type.String(), Type.Null()], {
      description: 'Why the task counts as overloaded; null when it does not',
    }),
    analysed_fps: Rate('Frames analysed per second over the last few seconds'),
    target_fps: Nullable(
      Rate('The most frames the task analyses per second (its analysis_fps); null for image and diff tasks'),
    ),
    frames_analysed: Count('Frames analysed since the task started'),
    frames_dropped: Count('Frames dropped because analysis was busy'),
    analysis_errors: Count('Frames whose analysis failed'),
    last_analysis_error: Type.Union([Type.String(), Type.Null()]),
    inference_ms: Nullable(
      Type.Number({ minimum: 0, description: 'Last inference time; null before the first' }),
    ),
    images: Count('Images analysed (image and diff tasks)'),
    ai_video: Type.Array(AiVideoHealth),
    events_refused: Count(
      "Events of the task the engine built but refused as invalid since it started: alarms lost to a defect, never delivered (the engine's log and GET /api/system say why)",
    ),
    clock_breaks: Count(
      "Extension: times the source's own timestamps stepped back, jumped or wrapped since the task started (a camera or publisher restarting, RTSP timestamps wrapping); the rules measured real time across each, so no alarm was lost. 0 for image and diff tasks and closed tasks",
    ),
    last_clock_break_at: Nullable(
      Type.Integer({
        description: 'Extension: when the last clock break was seen (ms since the epoch); null when none',
      }),
    ),
    stream_lost_since: Nullable(
      Type.Integer({
        description:
          'When the video stream was lost (ms since the epoch), while it is; null while it delivers, and for image and diff tasks and closed tasks',
      }),
    ),
    clips: Type.Union([Type.Literal('recording'), Type.Literal('off'), Type.Literal('no_keyframes')], {
      description:
        "Extension: whether the task keeps its camera's own stream for clips: recording; no_keyframes (its stream has no keyframe, or one so rarely, that no clip could be cut: recording stopped, the analysis goes on); off (clips are off, its codec cannot be kept, or not a running video task)",
    }),
    clips_reason: Nullable(
      Type.String({
        description: "Extension: why clips is off or no_keyframes for this task's stream; null otherwise",
      }),
    ),
    gate: GateHealth,
    sub_stream: Nullable(SubStreamHealth),
  },
  { additionalProperties: false },
);
export type TaskHealth = Static<typeof TaskHealth>;
/** What the analysis knows of a task's health; the outbox adds the events it refused, the registry when the stream was lost. */
export type AnalysisHealth = Omit<TaskHealth, 'events_refused' | 'stream_lost_since'>;

export const ModelHealth = Type.Object(
  {
    model: Type.String({ description: 'Package and model the figures are for' }),
    inference_ms: Nullable(Type.Number({ minimum: 0, description: 'Mean inference time, recent runs' })),
    queue: Count('Inferences waiting for a thread'),
    provider: Type.String({
      description: 'Execution provider in use: cpu, cuda, tensorrt, directml or coreml',
    }),
    provider_fallback: Nullable(
      Type.String({ description: 'Why it does not run where the engine setting asked; null when it does' }),
    ),
  },
  { additionalProperties: false },
);

/** GET /api/system: the machine's view (extension). */
export const SystemInfo = Type.Object(
  {
    cpu: Type.Object(
      {
        cores: Count('Logical cores'),
        load_1m: Rate('One-minute load average (0 on Windows)'),
        engine_percent: Rate('CPU used by the engine process and its inference hosts, % of one core'),
      },
      { additionalProperties: false },
    ),
    memory: Type.Object(
      {
        total_bytes: Count('Physical memory'),
        free_bytes: Count('Memory free for new work'),
        engine_rss_bytes: Count('Resident memory of the engine process and its inference hosts'),
      },
      { additionalProperties: false },
    ),
    models: Type.Array(ModelHealth),
    versions: Type.Object(
      {
        engine: Type.String(),
        node: Type.String(),
        ffmpeg: Type.String(),
        onnxruntime: Type.String(),
        nats_server: Nullable(
          Type.String({
            description:
              'Extension: the version of the NATS server binary this install brings (the desktop app ships one; VC_NATS_SERVER names it), null when it brings none',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    disk: Type.Object(
      {
        data_dir_bytes: Count('Bytes used under the data dir'),
        free_bytes: Count('Bytes free on the data dir filesystem'),
        total_bytes: Count('Size of the data dir filesystem'),
      },
      { additionalProperties: false },
    ),
    media_dirs: Type.Array(Type.String(), {
      description:
        'Folders whose video files may be sources of tasks and previews (--media-dir, media_dirs; default <data-dir>/media), as the engine was started with',
    }),
    outbox: Type.Object(
      {
        pending: Count('Callbacks waiting for delivery'),
        oldest_age_ms: Nullable(
          Type.Integer({ minimum: 0, description: 'Age of the oldest pending callback' }),
        ),
        refused_events: Count(
          'Events the engine built but refused as invalid since it started: alarms lost to a defect, never delivered',
        ),
        last_refusal: Nullable(Type.String({ description: 'Why the last refused event was refused' })),
      },
      { additionalProperties: false },
    ),
    tasks: Type.Object(
      {
        running: Count('Tasks running'),
        stream_lost: Count('Video tasks whose stream is lost'),
        total: Count('Tasks listed (not purged)'),
        clock_breaks: Count(
          "Extension: times a video source's timestamps stepped back, jumped or wrapped since the engine started, over all tasks; each was measured in real time, no alarm lost",
        ),
        last_clock_break_at: Nullable(
          Type.Integer({ description: 'Extension: when the last clock break was seen (ms since the epoch)' }),
        ),
      },
      { additionalProperties: false },
    ),
    decoding: Type.Object(
      {
        setting: literals(HWACCELS),
        hwaccel: HwaccelInUse,
        fallback: Fallback,
      },
      {
        additionalProperties: false,
        description: 'Where new streams decode (each may fall back on its own)',
      },
    ),
    clips: ClipUsage,
    uptime_s: Rate('Seconds since the engine started'),
  },
  { additionalProperties: false },
);
export type SystemInfo = Static<typeof SystemInfo>;
