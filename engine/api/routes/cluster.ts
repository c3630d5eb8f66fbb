import { Type } from '@sinclair/typebox';
import { SiteTask, SiteView } from '../../cluster/site-view';
import type { Api } from '../app';
import type { ApiContext } from '../context';
import { Envelope, ErrorEnvelope, ok } from '../envelope';

export function clusterRoutes(app: Api, ctx: ApiContext): void {
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
      ok(
        ctx.cluster
          ? { enabled: true as const, ...(await ctx.cluster.siteView()) }
          : { enabled: false as const },
      ),
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
    async () => ok(ctx.cluster ? await ctx.cluster.siteTasks() : []),
  );
}
