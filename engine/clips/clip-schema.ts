/** The shapes of alarm clips (issue 35; /work/brief/clips-api.md): one schema each, types derived. */
import { type Static, type TSchema, Type } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ClipState = Type.Union([Type.Literal('pending'), Type.Literal('ready'), Type.Literal('none')]);
export type ClipState = Static<typeof ClipState>;

/** Why a clip has no file. */
export const CLIP_REASONS = [
  'no_buffer',
  'not_recording',
  'disk_full',
  'quota',
  'cut_failed',
  'engine_restarted',
  'expired',
] as const;
export type ClipReason = (typeof CLIP_REASONS)[number];

export const Clip = Type.Object({
  clip_id: Type.String(),
  task_id: Type.String(),
  event_id: Nullable(
    Type.String({ description: "The alarm it belongs to; null for an operator's saved clip" }),
  ),
  state: ClipState,
  reason: Nullable(Type.String({ description: `Why none: ${CLIP_REASONS.join(', ')}; null otherwise` })),
  start: Nullable(Type.Integer({ description: 'ms since the epoch of its first frame (null until ready)' })),
  end: Nullable(Type.Integer({ description: 'ms since the epoch of its end (null until ready)' })),
  preroll_short: Type.Boolean({ description: 'The buffer held less than the pre-roll asked for' }),
  bytes: Type.Integer({ minimum: 0, description: '0 until ready' }),
  codec: Nullable(Type.String({ description: "The camera's own codec, e.g. h264" })),
  url: Nullable(
    Type.String({
      description:
        'Ready only: /api/clips/{clip_id}?token=<link token> for a <video src>; the token lives 5 to 10 minutes',
    }),
  ),
});
export type Clip = Static<typeof Clip>;

/** What a `message` callback of a video task's alarm names: its clip as it was when the event was stored. */
export const ClipRef = Type.Object(
  {
    clip_id: Type.String(),
    state: Type.Union([Type.Literal('pending'), Type.Literal('none')]),
  },
  {
    additionalProperties: false,
    description:
      "Extension: the alarm's clip (video tasks, clips on); read it at GET /api/clips/{clip_id} with the API token",
  },
);
export type ClipRef = Static<typeof ClipRef>;

export const CLIP_SETTINGS_DEFAULTS = {
  enabled: true,
  pre_s: 5,
  post_s: 10,
  max_post_s: 60,
  quota_bytes: 10 * 1024 ** 3,
  retention_days: 14,
};
/** The smallest quota: a few clips of a 4K camera. */
export const MIN_CLIP_QUOTA_BYTES = 64 * 1024 * 1024;

const settingsFields = {
  enabled: Type.Boolean({ description: 'Cut a clip for each alarm of a video task (default true)' }),
  pre_s: Type.Integer({ minimum: 0, maximum: 30, description: 'Seconds before the alarm (default 5)' }),
  post_s: Type.Integer({ minimum: 1, maximum: 60, description: 'Seconds after the alarm (default 10)' }),
  max_post_s: Type.Integer({
    minimum: 1,
    maximum: 300,
    description:
      "Seconds after the alarm at most while the same track's alarm keeps firing; post_s..300 (default 60)",
  }),
  quota_bytes: Type.Integer({
    minimum: MIN_CLIP_QUOTA_BYTES,
    description: 'Bytes all clips may take; past it the oldest go first (default 10 GiB, at least 64 MiB)',
  }),
  retention_days: Type.Integer({
    minimum: 1,
    maximum: 365,
    description: 'Days a clip is kept (default 14)',
  }),
};

export const ClipSettings = Type.Object(settingsFields, { additionalProperties: false });
export type ClipSettings = Static<typeof ClipSettings>;

export const ClipSettingsBody = Type.Partial(ClipSettings, { additionalProperties: false });
export type ClipSettingsBody = Static<typeof ClipSettingsBody>;

const Id = Type.String({ minLength: 1, maxLength: 128 });

export const ClipListQuery = Type.Object(
  {
    task_id: Type.Optional(Id),
    saved: Type.Optional(
      Type.Boolean({ description: "true: operators' saved clips only; false: alarms' clips only" }),
    ),
    before: Type.Optional(Type.Integer({ minimum: 1, description: 'next_before of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Default 50' })),
  },
  { additionalProperties: false },
);
export type ClipListQuery = Static<typeof ClipListQuery>;

export const ClipPage = Type.Object({
  items: Type.Array(Clip),
  total: Type.Integer({ description: 'Clips matching the filter' }),
  next_before: Nullable(Type.Integer({ description: 'before of the next page; null on the last' })),
});
export type ClipPage = Static<typeof ClipPage>;

export const SaveClipBody = Type.Object(
  {
    seconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 30, description: 'The last seconds to save (default 10)' }),
    ),
  },
  { additionalProperties: false },
);

export const ClipFileQuery = Type.Object(
  {
    download: Type.Optional(
      Type.Union([Type.Literal('1'), Type.Literal('0')], {
        description: '1: as an attachment named after the camera and time',
      }),
    ),
    token: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

/** The clips' use of the disk, in GET /api/system. */
export const ClipUsage = Type.Object(
  {
    count: Type.Integer({ minimum: 0, description: 'Ready clips stored' }),
    bytes: Type.Integer({ minimum: 0, description: 'Bytes the ready clips take' }),
    quota_bytes: Type.Integer({ minimum: 0 }),
    dropped: Type.Object(
      {
        quota: Type.Integer({
          minimum: 0,
          description: 'Clips removed to stay under the quota since the engine started',
        }),
        retention: Type.Integer({
          minimum: 0,
          description: 'Clips removed past retention_days since the engine started',
        }),
        disk_full: Type.Integer({
          minimum: 0,
          description: 'Clips lost to a full disk since the engine started (their events are kept)',
        }),
      },
      { additionalProperties: false },
    ),
    last_error: Nullable(Type.String({ description: 'Why the last clip was not made' })),
    last_error_at: Nullable(Type.Integer({ description: 'When (ms since the epoch)' })),
  },
  { additionalProperties: false, description: 'Extension (issue 35): alarm clips on the data disk' },
);
export type ClipUsage = Static<typeof ClipUsage>;
