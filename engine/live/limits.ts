import { DomainError } from '../domain-error';

/**
 * What the engine's video processes may add up to. Each preview and each AI-video encoder is an
 * ffmpeg decoding or encoding H.264 (about half a core each at 720p), each push an ffmpeg copying
 * packets: a caller could otherwise start them until the machine stops.
 */
export interface LiveLimits {
  /** Raw previews (POST /api/stream) running at once, engine-wide. Default 4. */
  maxPreviews: number;
  /** AI-video encoders running at once, all tasks together. Default 16. */
  maxAiVideos: number;
  /** AI-video encoders of one task (distinct app_ids and bitrate steps). Default 4. */
  maxAiVideosPerTask: number;
  /** RTMP pushes running at once, engine-wide (one per distinct address of a video). Default 16. */
  maxPushes: number;
  /**
   * A push that has not been up for this long (never connected, or down since it last was) is
   * ended, and says why in the task's health. Default 60 s: a server's restart passes, a wrong
   * address does not hold an encoder for ever.
   */
  pushTimeoutMs: number;
}

export const LIVE_DEFAULTS: Readonly<LiveLimits> = {
  maxPreviews: 4,
  maxAiVideos: 16,
  maxAiVideosPerTask: 4,
  maxPushes: 16,
  pushTimeoutMs: 60_000,
};

/** Why a video request was refused; engine/api/domain-errors.ts maps it to its envelope code. */
export type LiveErrorKind = 'live.limit';

/** Retry-After of a refusal: previews and push-less AI videos nobody fetches end within 60 s. */
export const LIMIT_RETRY_AFTER_S = 30;

export function limitReached(message: string): DomainError<LiveErrorKind> {
  return new DomainError<LiveErrorKind>('live.limit', message, { retryAfterS: LIMIT_RETRY_AFTER_S });
}

/**
 * A count of running processes of one kind, bounded: take() holds a place or refuses with the
 * limit's message; the function it returns gives the place back (once, however often called).
 */
export class Slots {
  private used = 0;

  constructor(
    private readonly max: number,
    private readonly refusal: string,
  ) {}

  get inUse(): number {
    return this.used;
  }

  take(): () => void {
    if (this.used >= this.max) throw limitReached(this.refusal);
    this.used += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.used -= 1;
    };
  }
}

/** The engine-wide slots of AI-video encoders and RTMP pushes, which every task's videos share. */
export function aiVideoSlots(limits: LiveLimits): { encoders: Slots; pushes: Slots } {
  return {
    encoders: new Slots(
      limits.maxAiVideos,
      `the engine already runs ${limits.maxAiVideos} AI-video encoders, the most it allows; ask for the app_ids and bitrate of a running one, release one, or try again later`,
    ),
    pushes: new Slots(
      limits.maxPushes,
      `the engine already runs ${limits.maxPushes} RTMP pushes, the most it allows; release one or try again later`,
    ),
  };
}
