import type { PixelBox } from '../osd/label-placement';

/**
 * Where a tracked object's box is on a video frame shown between two analyses. The AI video runs at
 * the source rate (10-25 fps) and the analysis at 2-4 fps, a result arriving after its frame: a box
 * held at its analysed place trails a walking person by the hold plus the analysis time. Instead the
 * box moves on at the object's velocity, measured between its analysed places, to the shown frame's
 * time; a little at most (MAX_PREDICT_MS), and not at all for a box too old to trust (STALE_MS).
 * test/overlay-offset.test.ts measures the offset on a clip whose object positions are known.
 */

/** The furthest ahead of its analysed frame a box is moved: beyond it, it waits there. */
export const MAX_PREDICT_MS = 1_000;
/** A box whose object has not been analysed for this long is not drawn; nor is a velocity kept across such a gap. */
export const STALE_MS = 2_000;
/** The weight of the newest step in the velocity: detection jitter is halved, a turn followed in two analyses. */
const VELOCITY_WEIGHT = 0.5;

/**
 * When a frame shows what it shows (ms, on performance.now()'s scale): its place on its ffmpeg's
 * media clock, else when it left ffmpeg. The media clock holds while a loaded machine delivers frames
 * late and in bursts, which would otherwise move a box by the delivery's jitter rather than by the
 * object's motion. The analysed frames and the video's are the same frames, on the same clock.
 */
export function frameTime(frame: { receivedAt: number; mediaAt?: number }): number {
  return frame.mediaAt ?? frame.receivedAt;
}

/** A box as analysed, when (frameTime), and its velocity in px/ms. */
export interface BoxMotion extends PixelBox {
  at: number;
  vx: number;
  vy: number;
  /** Analyses of it so far (the first gives no velocity, the second the raw one). */
  seen: number;
}

const centre = (box: PixelBox) => ({ x: (box.x1 + box.x2) / 2, y: (box.y1 + box.y2) / 2 });

/** The box's motion after one more analysis at `at`. */
export function observe(previous: BoxMotion | undefined, box: PixelBox, at: number): BoxMotion {
  const { x1, y1, x2, y2 } = box;
  const still = { x1, y1, x2, y2, at, vx: 0, vy: 0, seen: 1 };
  if (!previous || at - previous.at > STALE_MS) return still;
  const dt = at - previous.at;
  // The same frame's result again (or clocks out of order): the place is news, the velocity is not.
  if (dt <= 0) return { ...previous, x1, y1, x2, y2 };
  const now = centre(box);
  const before = centre(previous);
  const dx = now.x - before.x;
  const dy = now.y - before.y;
  // Further than its own size in one analysis is no walk: the track went to another object.
  if (Math.abs(dx) > x2 - x1 || Math.abs(dy) > y2 - y1) return still;
  const weight = previous.seen === 1 ? 1 : VELOCITY_WEIGHT;
  return {
    ...still,
    vx: weight * (dx / dt) + (1 - weight) * previous.vx,
    vy: weight * (dy / dt) + (1 - weight) * previous.vy,
    seen: previous.seen + 1,
  };
}

/**
 * The motion after an analysis at `at` that missed the object: it stops where it was due then. A
 * missed object has often turned or stopped (the tracker, expecting it further on, lost it), and a box
 * sliding on past it for the next analyses trails it the other way.
 */
export function missed(motion: BoxMotion, at: number): BoxMotion {
  const box = predict(motion, at) ?? motion;
  return { ...motion, x1: box.x1, y1: box.y1, x2: box.x2, y2: box.y2, vx: 0, vy: 0 };
}

/** The box on a frame shown at `at`; null when its analysis is too old to draw. */
export function predict(motion: BoxMotion, at: number): PixelBox | null {
  const age = at - motion.at;
  if (age > STALE_MS) return null;
  const ahead = Math.max(0, Math.min(age, MAX_PREDICT_MS));
  const dx = motion.vx * ahead;
  const dy = motion.vy * ahead;
  return { x1: motion.x1 + dx, y1: motion.y1 + dy, x2: motion.x2 + dx, y2: motion.y2 + dy };
}
