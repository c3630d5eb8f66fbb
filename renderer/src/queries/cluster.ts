/** The site as the answering engine sees it (GET /api/cluster), as the console caches it. */
import { queryOptions } from '@tanstack/react-query';
import { getCluster } from '../api';
import type { Transport } from '../transport';

/**
 * Nodes beat every 500 ms and a silent one is judged after 3 s: read as often as the system page reads
 * its own figures, so a node's state shows within a few seconds of changing.
 */
export const CLUSTER_REFRESH_MS = 2_000;

export const clusterKeys = { all: ['cluster'] as const };

export const clusterQuery = (transport: Transport) =>
  queryOptions({
    queryKey: clusterKeys.all,
    queryFn: ({ signal }) => getCluster(transport, signal),
    // A single workstation does not become a node without a restart: asked once.
    refetchInterval: (query) => (query.state.data?.enabled === false ? false : CLUSTER_REFRESH_MS),
  });
