/** The engine's own figures as the console caches them (GET /api/system). */
import { queryOptions } from '@tanstack/react-query';
import { getSystem } from '../api';
import type { Transport } from '../transport';

/** The engine computes them at most every 2 s; reading faster would show the same answer. */
export const SYSTEM_REFRESH_MS = 2_000;

export const systemKeys = { all: ['system'] as const };

export const systemQuery = (transport: Transport) =>
  queryOptions({
    queryKey: systemKeys.all,
    queryFn: ({ signal }) => getSystem(transport, signal),
    refetchInterval: SYSTEM_REFRESH_MS,
  });
