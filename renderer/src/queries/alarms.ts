/** Alarm review as the console caches it: one page list per filter, the filter lists, the review write. */
import { infiniteQueryOptions, mutationOptions, type QueryClient, queryOptions } from '@tanstack/react-query';
import { type AlarmQuery, alarmFacets, listAlarms, reviewAlarms } from '../api';
import type { Transport } from '../transport';

export const ALARMS_PAGE = 50;

export const alarmKeys = {
  all: ['alarms'] as const,
  list: (query: AlarmQuery) => ['alarms', 'list', query] as const,
  facets: ['alarms', 'facets'] as const,
};

/**
 * Pages newest first. Not refetched on a timer: new alarms would move the rows under the reader;
 * the screen shows how many arrived and reads them when the operator asks.
 */
export const alarmsQuery = (transport: Transport, query: AlarmQuery) =>
  infiniteQueryOptions({
    queryKey: alarmKeys.list(query),
    initialPageParam: undefined as number | undefined,
    queryFn: ({ pageParam, signal }) =>
      listAlarms(transport, { ...query, before: pageParam, limit: ALARMS_PAGE }, signal),
    getNextPageParam: (page) => page.next_before ?? undefined,
    staleTime: Number.POSITIVE_INFINITY,
  });

export const alarmFacetsQuery = (transport: Transport) =>
  queryOptions({
    queryKey: alarmKeys.facets,
    queryFn: ({ signal }) => alarmFacets(transport, signal),
    staleTime: 30_000,
  });

/** Marks alarms reviewed (or not); the cached pages are patched in place, so no row moves. */
export const reviewMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: ({ eventIds, reviewed }: { eventIds: string[]; reviewed: boolean }) =>
      reviewAlarms(transport, eventIds, reviewed),
    onSuccess: (_updated, { eventIds, reviewed }) => {
      const at = reviewed ? Date.now() : null;
      const ids = new Set(eventIds);
      client.setQueriesData<{
        pages: Array<{ items: Array<{ event_id: string; reviewed_at: number | null }> }>;
      }>(
        { queryKey: ['alarms', 'list'] },
        (data) =>
          data && {
            ...data,
            pages: data.pages.map((page) => ({
              ...page,
              items: page.items.map((item) => (ids.has(item.event_id) ? { ...item, reviewed_at: at } : item)),
            })),
          },
      );
    },
  });
