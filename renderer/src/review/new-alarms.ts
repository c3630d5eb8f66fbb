import type { FeedItem } from '../feed/model';
import type { AlarmFilter } from './filter';

/**
 * Alarms the live feed brought after the newest one the list shows, as far as the feed can tell
 * they match the filter (camera, app): what the "N new" marker counts instead of moving rows.
 */
export function newAlarms(items: readonly FeedItem[], newestShown: number, filter: AlarmFilter): number {
  let count = 0;
  for (const { body } of items) {
    if (body.event !== 'message' || body.timestamp <= newestShown) continue;
    if (filter.taskId && body.task_id !== filter.taskId) continue;
    if (filter.appId && body.app_id !== filter.appId) continue;
    count += 1;
  }
  return count;
}
