/**
 * The clip player's arithmetic, pure: where a frame step lands, which stored alarms' boxes belong to
 * the picture shown, and the clip's links. A clip's video time 0 is its first frame, at `clip.start`
 * (ms since the epoch) on the camera's clock, the clock the alarms' timestamps are on.
 */
import type { CallbackBody } from '../../../engine/contract';
import type { Clip } from '../api';
import type { LinkAccess } from '../optimization/links';

/** How far from an alarm's timestamp its boxes are still drawn: they are only known at that frame. */
export const BOX_WINDOW_MS = 500;
/** The frame rate assumed until the clip names its own or its frames were measured. */
export const FALLBACK_FPS = 25;

/** Where one frame forward (+1) or back (-1) lands, inside [0, duration]. */
export function stepTime(current: number, fps: number, direction: 1 | -1, duration: number): number {
  const frame = 1 / fps;
  const end = Number.isFinite(duration) ? duration : Number.POSITIVE_INFINITY;
  return Math.min(end, Math.max(0, current + direction * frame));
}

/** The frame rate of presented frames' media times (the smallest positive step); null before two. */
export function measuredFps(mediaTimes: readonly number[]): number | null {
  let smallest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < mediaTimes.length; i++) {
    const step = (mediaTimes[i] as number) - (mediaTimes[i - 1] as number);
    if (step > 1e-4 && step < smallest) smallest = step;
  }
  return Number.isFinite(smallest) ? 1 / smallest : null;
}

export interface Box {
  /** Left, top, width, height in the source frame's pixels. */
  x: number;
  y: number;
  w: number;
  h: number;
  label: string;
}

export interface FrameBoxes {
  frame: { width: number; height: number };
  boxes: Box[];
}

/** The boxes a stored alarm body reports (its objects' boxes are centred on x, y). */
export function boxesOf(body: CallbackBody | undefined): FrameBoxes | null {
  if (body?.event !== 'message') return null;
  const boxes = body.data.rules.flatMap((rule) =>
    rule.objects
      .filter((object) => object.w > 0 && object.h > 0)
      .map((object) => ({
        x: object.x - object.w / 2,
        y: object.y - object.h / 2,
        w: object.w,
        h: object.h,
        label: `${object.name || object.class_id} ${object.score.toFixed(2)}`,
      })),
  );
  return { frame: { width: body.data.frame.width, height: body.data.frame.height }, boxes };
}

/**
 * The alarms whose boxes belong at this moment of the clip: those within BOX_WINDOW_MS of it, the
 * nearest first. Elsewhere nothing is known of where the object was, so nothing is drawn.
 */
export function alarmsAt<T extends { timestamp: number }>(
  alarms: readonly T[],
  clipStart: number,
  currentTime: number,
): T[] {
  const at = clipStart + currentTime * 1000;
  return alarms
    .filter((alarm) => Math.abs(alarm.timestamp - at) <= BOX_WINDOW_MS)
    .sort((a, b) => Math.abs(a.timestamp - at) - Math.abs(b.timestamp - at));
}

/** The alarms a clip covers (with the box window at either end): the ones worth reading boxes for. */
export function alarmsInClip<T extends { timestamp: number }>(alarms: readonly T[], clip: Clip): T[] {
  if (clip.start === null || clip.end === null) return [];
  const { start, end } = clip;
  return alarms.filter(
    (alarm) => alarm.timestamp >= start - BOX_WINDOW_MS && alarm.timestamp <= end + BOX_WINDOW_MS,
  );
}

/**
 * A ready clip's address for a <video> or a download: its own URL (it carries a short-lived link
 * token), kept to the engine's /api/ on the engine's origin; null otherwise.
 */
export function clipLink(clip: Clip, access: LinkAccess | null, download = false): string | null {
  if (clip.state !== 'ready' || !clip.url || !access) return null;
  let url: URL;
  try {
    url = new URL(clip.url, access.base);
  } catch {
    return null;
  }
  if (url.origin !== new URL(access.base).origin || !url.pathname.startsWith('/api/clips/')) return null;
  if (download) url.searchParams.set('download', '1');
  return url.href;
}
