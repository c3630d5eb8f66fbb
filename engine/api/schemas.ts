import { Type } from '@sinclair/typebox';
import { Rule } from '../rules/schema';
import { oneOf } from '../schema/ajv';

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
});

export const PasswordChange = Type.Object(
  { password: Type.String({ minLength: 8, maxLength: 256, description: 'The new password' }) },
  { additionalProperties: false },
);

export const PackageInstalled = Type.Object({
  zapk_id: Type.String(),
  version: Type.String(),
  upgraded: Type.Boolean(),
});

export const AppUpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    rule: Type.Optional(Rule),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ZapkParams = Type.Object({ zapk_id: Type.String({ minLength: 1, maxLength: 128 }) });
export const AppParams = Type.Object({
  zapk_id: Type.String({ minLength: 1, maxLength: 128 }),
  app_id: Type.String({ minLength: 1, maxLength: 128 }),
});
export const TaskParams = Type.Object({ task_id: Type.String({ minLength: 1, maxLength: 128 }) });
export const LiveStreamParams = Type.Object({
  task_id: Type.String({ minLength: 1, maxLength: 128 }),
  stream: Type.String({ minLength: 1, maxLength: 128 }),
});
export const StreamParams = Type.Object({ stream_id: Type.String({ minLength: 1, maxLength: 128 }) });
export const OptimizationParams = Type.Object({
  task_id: Type.String({ minLength: 1, maxLength: 128 }),
  optimization_id: Type.String({ minLength: 1, maxLength: 128 }),
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
