import { Type } from '@sinclair/typebox';
import type { ClusterNode } from '../../cluster/cluster-node';
import { LeaveState, SiteTask, SiteView } from '../../cluster/site-view';
import { Envelope, ErrorEnvelope, ok } from '../envelope';
import { ApiError } from '../errors';
import type { RoutePlugin } from '../route-plugin';

export const clusterRoutes: RoutePlugin<{ cluster?: ClusterNode }> = async (app, { cluster }) => {
  app.get(
    '/api/cluster',
    {
      schema: {
        tags: ['health'],
        summary:
          'Extension: the cluster this engine is a node of (its nodes, leader, which node runs each task)',
        response: { 200: Envelope(SiteView), 401: ErrorEnvelope },
      },
    },
    async () =>
      ok(cluster ? { enabled: true as const, ...(await cluster.siteView()) } : { enabled: false as const }),
  );

  app.get(
    '/api/cluster/tasks',
    {
      schema: {
        tags: ['health'],
        summary:
          'Extension: every task of the cluster, as shared, with the node that runs it (empty on a single workstation: GET /api/tasks lists its tasks)',
        response: { 200: Envelope(Type.Array(SiteTask)), 401: ErrorEnvelope },
      },
    },
    async () => ok(cluster ? await cluster.siteTasks() : []),
  );

  app.post(
    '/api/cluster/leave',
    {
      config: { refusals: ['NOT_CLUSTER_NODE'] },
      schema: {
        tags: ['health'],
        summary:
          'Extension: this node leaves its site: its cameras move to the other nodes (make-before-break), then it takes itself out; call again to see where it stands',
        response: { 200: Envelope(LeaveState), 401: ErrorEnvelope },
      },
    },
    async () => {
      if (!cluster) throw new ApiError('NOT_CLUSTER_NODE', 'this engine is not a node of a site');
      return ok(cluster.leave());
    },
  );
};
