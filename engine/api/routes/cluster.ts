import { Type } from '@sinclair/typebox';
import type { ClusterNode } from '../../cluster/cluster-node';
import { LeaveBody, LeaveState, SiteTask, SiteView } from '../../cluster/site-view';
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

  app.post<{ Body: LeaveBody | undefined }>(
    '/api/cluster/leave',
    {
      config: { refusals: ['NOT_CLUSTER_NODE', 'TAKE_REFUSED'] },
      schema: {
        tags: ['health'],
        summary:
          'Extension: this node leaves its site: its cameras move to the other nodes (make-before-break) but for those named in take, which move here and leave the site with it; then it takes itself out; call again (no body) to see where it stands',
        body: LeaveBody,
        response: { 200: Envelope(LeaveState), 401: ErrorEnvelope },
      },
      // No body (the call that asks where the node stands, and every client before take) is an empty one.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      if (!cluster) throw new ApiError('NOT_CLUSTER_NODE', 'this engine is not a node of a site');
      return ok(await cluster.leave(request.body?.take));
    },
  );
};
