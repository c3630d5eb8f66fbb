/** What the screens show of a task's health: typed figures from the engine, never its dump line. */
import type { TaskHealth } from '../../engine/contract';
import type { Size } from './geometry/viewport';

/** The task table's figures; null where the task has no stream (image and diff tasks, closed ones). */
export function taskFigures(health: TaskHealth): { fps: number | null; reconnects: number | null } {
  return {
    fps: health.stream ? health.analysed_fps : null,
    reconnects: health.stream ? health.stream.reconnects : null,
  };
}

/** The source frame size the engine decodes (what polygons are in); null before the first frame. */
export function sourceSize(health: TaskHealth): Size | null {
  const width = health.stream?.width ?? 0;
  const height = health.stream?.height ?? 0;
  return width > 0 && height > 0 ? { width, height } : null;
}
