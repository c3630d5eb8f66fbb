import { Type } from '@sinclair/typebox';
import { PASSWORD_POLICY } from '../auth/password-policy';
import { Verdict } from '../optimization/schema';
import { Rule } from '../rules/schema';
import { oneOf } from '../schema/ajv';
import { Name } from '../schema/text';

/** Request and answer shapes of the endpoints not owned by a domain module. */

export const TokenRequest = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

export const TokenData = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires' }),
  password_change_required: Type.Optional(
    Type.Boolean({
      description:
        "Extension, present (true) only when the user signed in with the first start's random password, which the console asks to replace",
    }),
  ),
});

/** A new password as every way of setting one takes it (the policy's further rules: password-policy.ts). */
const NewPassword = Type.String({
  minLength: PASSWORD_POLICY.minLength,
  maxLength: PASSWORD_POLICY.maxLength,
  description:
    'The new password: at least 8 characters, 4 of them different, not a run such as 12345678, not the username, not one of the most common passwords',
});

export const PasswordChange = Type.Object(
  {
    current_password: Type.String({
      minLength: 1,
      maxLength: PASSWORD_POLICY.maxLength,
      description: "The user's current password",
    }),
    password: NewPassword,
  },
  { additionalProperties: false },
);

/** The desktop console's reset of the admin password, through main (which holds no password). */
export const PasswordReset = Type.Object({ password: NewPassword }, { additionalProperties: false });

export const PackageInstalled = Type.Object({
  zapk_id: Type.String(),
  version: Type.String(),
  upgraded: Type.Boolean(),
  change: Type.Union([
    Type.Literal('installed'),
    Type.Literal('upgraded'),
    Type.Literal('reinstalled'),
    Type.Literal('downgraded'),
  ]),
});

export const AppUpdateBody = Type.Object(
  {
    name: Type.Optional(Name({ minLength: 1, maxLength: 128 })),
    rule: Type.Optional(Rule),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** The longest path parameter (an id) the router matches (find-my-way's default); a longer one is refused with 400. */
export const MAX_PARAM_LENGTH = 100;
/** An id in the path, as long as the router lets one be. */
export const PathId = Type.String({ minLength: 1, maxLength: MAX_PARAM_LENGTH });

export const ZapkParams = Type.Object({ zapk_id: PathId });
export const AppParams = Type.Object({
  zapk_id: PathId,
  app_id: PathId,
});
export const TaskParams = Type.Object({ task_id: PathId });
export const LiveStreamParams = Type.Object({
  task_id: PathId,
  stream: PathId,
});
export const StreamParams = Type.Object({ stream_id: PathId });
export const OptimizationParams = Type.Object({
  task_id: PathId,
  optimization_id: PathId,
});

export const ImageQuery = Type.Object(
  {
    device_id: Type.Optional(Type.String({ maxLength: 256 })),
    image_id: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    enhance: Type.Optional(oneOf([0, 1])),
  },
  { additionalProperties: false },
);

export const AiLiveBody = Type.Object(
  {
    app_ids: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
      minItems: 1,
      maxItems: 64,
      uniqueItems: true,
    }),
    rtmp: Type.Optional(Type.String({ maxLength: 2048, description: 'rtmp:// or rtmps:// push address' })),
    bitrate: Type.Optional(Type.Integer({ minimum: 100, maximum: 50_000, description: 'kbit/s' })),
    width: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 65_535,
        description:
          'Extension: scale the video down to about this width in px (a tile of a wall): encoded at the highest of 320, 480, 640, 960, 1280 not above it, at most 10 fps; the source size when the step is not smaller',
      }),
    ),
  },
  { additionalProperties: false },
);

export const StreamBody = Type.Object(
  {
    video_url: Type.String({ minLength: 1, maxLength: 2048 }),
    device_id: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);

export const AiLiveData = Type.Object({
  stream: Type.String({
    description: 'This viewer of the AI video; DELETE .../livestream/{stream} releases it',
  }),
  hls_url: Type.String({
    description: 'Absolute URL of the HLS playlist; send the token as header or ?token=',
  }),
  rtmp: Type.String({ description: 'The push address, or "" without a push' }),
  bitrate: Type.Integer({
    description:
      'Extension: kbit/s the video is encoded at, the requested bitrate rounded down to a step (shared by every request on that step)',
  }),
  width: Type.Integer({ description: 'Extension: the encoded width in px (see the request width)' }),
  height: Type.Integer({ description: 'Extension: the encoded height in px' }),
});

export const StreamData = Type.Object({
  stream_id: Type.String(),
  hls_url: Type.String({
    description: 'Absolute URL of the HLS playlist; send the token as header or ?token=',
  }),
  width: Type.Integer({ description: 'Source frame width in pixels (polygons are drawn in these)' }),
  height: Type.Integer(),
});

/** A file of an HLS stream: its playlist or one of the segments the playlist names. */
const HlsFileName = Type.String({ pattern: '^(index\\.m3u8|seg[0-9]{5,12}\\.ts)$' });
export const LiveFileParams = Type.Object({
  task_id: PathId,
  stream: PathId,
  file: HlsFileName,
});
export const StreamFileParams = Type.Object({
  stream_id: PathId,
  file: HlsFileName,
});
export const LinkRequest = Type.Object(
  {
    paths: Type.Array(Type.String({ minLength: 5, maxLength: 2048, pattern: '^/api/' }), {
      minItems: 1,
      maxItems: 200,
      description:
        'Engine paths of pictures or downloads (their own query kept), e.g. /api/task/{id}/snapshot',
    }),
  },
  { additionalProperties: false },
);

export const LinkData = Type.Object({
  links: Type.Array(
    Type.Object({
      path: Type.String(),
      url: Type.String({ description: 'The path with its link token in ?token= (or &token=)' }),
    }),
  ),
  expires_in: Type.Integer({ description: 'Seconds the links work for (5 to 10 minutes)' }),
});

export const HlsQuery = Type.Object(
  {
    token: Type.Optional(
      Type.String({ maxLength: 512, description: 'For players that cannot send Authorization (hls.js)' }),
    ),
  },
  { additionalProperties: false },
);

export const OptimizationBody = Type.Object(
  {
    app_ids: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
      minItems: 1,
      maxItems: 64,
      uniqueItems: true,
    }),
    duration: Type.Integer({ minimum: 10, maximum: 24 * 3600, description: 'Seconds of collection' }),
    max_samples: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  { additionalProperties: false },
);

export const Health = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String(),
  uptime_s: Type.Integer(),
});

export const SampleParams = Type.Object({
  task_id: PathId,
  optimization_id: PathId,
  sample_id: Type.String({
    pattern: '^[1-9][0-9]{0,8}$',
    description: 'The sample_id of a sample of the run',
  }),
});

export const SampleListQuery = Type.Object(
  {
    after_id: Type.Optional(Type.Integer({ minimum: 0, description: 'Samples with a larger sample_id' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Default 100' })),
    verdict: Type.Optional(Verdict),
    app_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false },
);

/** Binary answers a browser fetches through a plain link (img src, download) take the token as ?token=. */
const QueryToken = Type.Optional(
  Type.String({ maxLength: 512, description: 'The token, for links that cannot send Authorization' }),
);

export const SampleImageQuery = Type.Object(
  {
    thumb: Type.Optional(Type.Boolean({ description: 'A thumbnail 320 px wide instead of the full frame' })),
    token: QueryToken,
  },
  { additionalProperties: false },
);

export const ExportQuery = Type.Object({ token: QueryToken }, { additionalProperties: false });
