import { SiteView } from '../../cluster/site-view';
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
      ok(ctx.cluster ? { enabled: true as const, ...ctx.cluster.view() } : { enabled: false as const }),
  );
}
