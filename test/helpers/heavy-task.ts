import { TASK_AREA_LIMITS } from '../../engine/tasks/limits';
import type { AppConfig, Polygon } from '../../engine/tasks/schema';

/**
 * Start-task bodies as heavy as bounds allow: convex polygons (points on a circle, so every region is
 * valid) whose coordinates carry as many decimals as fit.
 */

/** `points` points on a circle, each coordinate rounded to `decimals` places. */
export function circle(cx: number, cy: number, radius: number, points: number, decimals: number): Polygon {
  return Array.from({ length: points }, (_, i) => {
    const angle = (2 * Math.PI * i) / points;
    return [
      Number((cx + radius * Math.cos(angle)).toFixed(decimals)),
      Number((cy + radius * Math.sin(angle)).toFixed(decimals)),
    ];
  });
}

/** A zone name as long as names go, unique by its number. */
const zoneName = (i: number) => `zone ${i} `.padEnd(64, 'z');

/**
 * One app's areas: its polygon, `zones` zones and `masks` masks, each `points` points, all at
 * `decimals` decimals.
 */
function areas(appId: string, zones: number, masks: number, points: number, decimals: number): AppConfig {
  const at = (i: number) =>
    circle(2000 + (i % 8) * 1500, 2000 + Math.floor(i / 8) * 1500, 700, points, decimals);
  return {
    app_id: appId,
    polygon: at(0),
    zones: Array.from({ length: zones }, (_, i) => ({ name: zoneName(i), polygon: at(i + 1) })),
    masks: Array.from({ length: masks }, (_, i) => at(zones + i + 1)),
  };
}

const bytes = (body: unknown) => Buffer.byteLength(JSON.stringify(body));

/**
 * The heaviest image-task body of the built-in motion app that the bounds allow: every point a task
 * may carry, in polygons as large as allowed, text fields at their longest, and coordinates with as
 * many decimals as the body limit leaves room for.
 */
export function heaviestImageTask(): Record<string, unknown> {
  const { pointsPerPolygon, pointsPerTask, bodyBytes } = TASK_AREA_LIMITS;
  const polygons = Math.floor(pointsPerTask / pointsPerPolygon);
  const zones = Math.floor((polygons - 1) / 2);
  const body = (decimals: number) => ({
    mode: 'image',
    name: 'n'.repeat(64),
    zapk_id: 'builtin',
    app_ids: ['motion'],
    device_id: 'd'.repeat(256),
    business_id: 'b'.repeat(256),
    app_configs: [areas('motion', zones, polygons - 1 - zones, pointsPerPolygon, decimals)],
  });
  for (let decimals = 12; decimals >= 0; decimals--) {
    if (bytes(body(decimals)) <= bodyBytes) return body(decimals);
  }
  throw new Error('no body fits the bounds');
}

/**
 * The issue's body: a video task whose two apps each carry a polygon, 32 zones and 32 masks of 256
 * points (valid before the per-task bounds), about 790 KB.
 */
export function issueVideoTask(videoUrl: string): Record<string, unknown> {
  const body = (decimals: number) => ({
    zapk_id: 'builtin',
    app_ids: ['motion', 'intrusion'],
    video_url: videoUrl,
    app_configs: ['motion', 'intrusion'].map((appId) => areas(appId, 32, 32, 256, decimals)),
  });
  for (let decimals = 0; decimals <= 12; decimals++) {
    if (bytes(body(decimals)) >= 790_000) return body(decimals);
  }
  throw new Error('no body reaches 790 KB');
}

/** Bytes of a body as JSON. */
export const bodyBytes = bytes;
