import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { getTaskCounts } from '../api';
import { useTransport } from '../context';
import { useT } from '../store';

/** As often as the task itself is read: counts change with every crossing. */
const COUNTS_REFRESH_MS = 2_000;

/**
 * What a running task's apps have counted (GET /api/task/{id}/counts): each counting line's crossings
 * per direction (A -> B is the engine's `in`, as the line's arrow shows) and each zone's objects now.
 */
export function LiveCounts({ taskId, appName }: { taskId: string; appName: (appId: string) => string }) {
  const t = useT();
  const transport = useTransport();
  const titleId = useId();
  const counts = useQuery({
    queryKey: ['task-counts', taskId],
    queryFn: ({ signal }) => getTaskCounts(transport, taskId, signal),
    refetchInterval: COUNTS_REFRESH_MS,
  });
  const apps = counts.data?.apps ?? [];
  const lines = apps.flatMap(({ app_id, line }) => (line ? [{ app_id, line }] : []));
  const zones = apps.flatMap(({ app_id, zones: occupancy }) =>
    Object.entries(occupancy ?? {}).map(([zone, { count }]) => ({ app_id, zone, count })),
  );
  if (!counts.data) return null;
  return (
    <section className="live-counts" aria-labelledby={titleId}>
      <h3 id={titleId}>{t('live.counts')}</h3>
      {lines.length === 0 && zones.length === 0 ? (
        <p className="meta">{t('live.countsNone')}</p>
      ) : (
        <ul>
          {lines.map(({ app_id, line }) => (
            <li key={`line-${app_id}`} data-app={app_id}>
              {t('live.countsLine', { app: appName(app_id), in: line.in, out: line.out })}
            </li>
          ))}
          {zones.map(({ app_id, zone, count }) => (
            <li key={`zone-${app_id}-${zone}`} data-app={app_id} data-zone={zone}>
              {t('live.countsZone', { app: appName(app_id), zone, count })}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
