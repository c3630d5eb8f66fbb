import { AuditPage, AuditQuery } from '../../audit/audit-schema';
import type { Api } from '../app';
import type { ApiContext } from '../context';
import { Envelope, ok } from '../envelope';

export function auditRoutes(app: Api, ctx: ApiContext): void {
  app.get(
    '/api/audit',
    {
      schema: {
        tags: ['health'],
        summary: 'Extension: the audit trail, who changed what, newest first, filtered and paged',
        querystring: AuditQuery,
        response: { 200: Envelope(AuditPage) },
      },
    },
    async (request) => ok(ctx.audit.list(request.query)),
  );
}
