/** The newest audit entries as the system page shows them (GET /api/audit). */
import { queryOptions } from '@tanstack/react-query';
import { listAudit } from '../api';
import type { Transport } from '../transport';

/** Entries the system page lists: the last changes at a glance, not an investigation tool. */
export const RECENT_CHANGES = 20;
const REFRESH_MS = 10_000;

export const auditKeys = { recent: ['audit', 'recent'] as const };

export const recentChangesQuery = (transport: Transport) =>
  queryOptions({
    queryKey: auditKeys.recent,
    queryFn: ({ signal }) => listAudit(transport, RECENT_CHANGES, signal),
    refetchInterval: REFRESH_MS,
  });
