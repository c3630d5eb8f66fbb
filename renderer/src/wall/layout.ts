/**
 * The live wall's arithmetic, pure: which cameras a page shows, whether its tiles play video or
 * refresh snapshots, and each camera's recent alarms.
 */
import type { FeedItem } from '../feed/model';

export const WALL_SIZES = [1, 4, 9, 16] as const;
export type WallSize = (typeof WALL_SIZES)[number];

/**
 * Most tiles that play their AI video at once. Each one is an encoder in the engine (about half a
 * core for a 720p stream, bench:live) and a decoder in the page: past four, a workstation's CPU goes
 * to the wall instead of the analysis, so larger walls show refreshing snapshots (a focused tile
 * always plays).
 */
export const DECODE_BUDGET = 4;

/** How often a snapshot tile takes a new picture. */
export const SNAPSHOT_REFRESH_MS = 2_000;

/** How far back a tile counts its camera's alarms. */
export const ALARM_WINDOW_MS = 10 * 60_000;

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

/** Whether the tiles of a page play video: only while they fit the decoding budget. */
export function playsVideo(tilesOnPage: number): boolean {
  return tilesOnPage <= DECODE_BUDGET;
}

/** Alarms (fired rules) of a camera since `since` (ms since the epoch), from the live feed. */
export function recentAlarms(items: readonly FeedItem[], taskId: string, since: number): number {
  let count = 0;
  for (const { body } of items) {
    if (body.event !== 'message' || body.task_id !== taskId || body.timestamp < since) continue;
    count += 1;
  }
  return count;
}
