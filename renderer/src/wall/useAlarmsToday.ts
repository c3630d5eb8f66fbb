import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { listAlarms } from '../api';
import { useTransport } from '../context';
import { useFeed } from '../feed/store';
import { useNow } from '../hooks/useNow';
import { lastAlarmAt, startOfDay } from './layout';

/** How often the day's start is looked at (a tile's count starts again at midnight). */
const DAY_CHECK_MS = 60_000;

/**
 * A camera's alarms since local midnight, as the engine stored them (GET /api/alarms, total): the
 * same after a reload or on another console. Asked again whenever the live feed hears one of its
 * alarms; undefined until the first answer.
 */
export function useAlarmsToday(taskId: string): number | undefined {
  const transport = useTransport();
  const since = startOfDay(useNow(DAY_CHECK_MS));
  const heard = useFeed((state) => lastAlarmAt(state.items, taskId));
  const count = useQuery({
    queryKey: ['wall-alarms', taskId, since, heard],
    queryFn: ({ signal }) => listAlarms(transport, { task_id: taskId, since, limit: 1 }, signal),
    select: (page) => page.total,
    placeholderData: keepPreviousData,
  });
  return count.data;
}
