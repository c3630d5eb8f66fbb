/**
 * The live wall's arithmetic, pure: which cameras a page shows, the video a tile asks for, and
 * since when its alarms count.
 */
import type { VideoScale } from '../api';
import type { FeedItem } from '../feed/model';

export const WALL_SIZES = [1, 4, 9, 16] as const;
export type WallSize = (typeof WALL_SIZES)[number];

/**
 * The AI video a tile of each grid asks for: scaled to about the tile's width on a 1920 px screen,
 * at a bitrate for that size (the engine encodes it at most 10 fps, one encoder per camera and size
 * shared by every console). A single camera gets the full-size video. A tile's video costs the
 * engine and the browser about half to four fifths of a full-size 720p one (bench:wall), and a 4x4
 * wall stays within the engine's 16 AI-video encoders.
 */
const TILE_VIDEOS: Record<WallSize, VideoScale | null> = {
  1: null,
  4: { width: 960, bitrate: 1000 },
  9: { width: 640, bitrate: 600 },
  16: { width: 480, bitrate: 400 },
};

export function tileVideo(size: WallSize): VideoScale | null {
  return TILE_VIDEOS[size];
}

/** How often a snapshot tile (its video not to be had) takes a new picture. */
export const SNAPSHOT_REFRESH_MS = 2_000;

export function isWallSize(value: unknown): value is WallSize {
  return (WALL_SIZES as readonly unknown[]).includes(value);
}

export function pageCount(cameras: number, size: WallSize): number {
  return Math.max(1, Math.ceil(cameras / size));
}

/** The cameras of one page (the page number clamped to the pages there are). */
export function pageOf<T>(cameras: readonly T[], size: WallSize, page: number): T[] {
  const last = pageCount(cameras.length, size) - 1;
  const start = Math.min(Math.max(0, page), last) * size;
  return cameras.slice(start, start + size);
}

/** Local midnight before `now` (ms since the epoch): a tile counts its camera's alarms since then. */
export function startOfDay(now: number): number {
  const day = new Date(now);
  day.setHours(0, 0, 0, 0);
  return day.getTime();
}

/**
 * When the live feed last heard an alarm (a fired rule) of a camera, ms since the epoch; 0 if never.
 * A change asks the engine for the camera's count again.
 */
export function lastAlarmAt(items: readonly FeedItem[], taskId: string): number {
  let last = 0;
  for (const { body } of items) {
    if (body.event === 'message' && body.task_id === taskId) last = Math.max(last, body.timestamp);
  }
  return last;
}
