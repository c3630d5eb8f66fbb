/** Alarm review's filter lists as the console caches them (the review itself is on items: ./review.ts). */
import { queryOptions } from '@tanstack/react-query';
import { alarmFacets } from '../api';
import type { Transport } from '../transport';

export const alarmKeys = {
  facets: ['alarms', 'facets'] as const,
};

export const alarmFacetsQuery = (transport: Transport) =>
  queryOptions({
    queryKey: alarmKeys.facets,
    queryFn: ({ signal }) => alarmFacets(transport, signal),
    staleTime: 30_000,
  });
