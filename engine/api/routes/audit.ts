import { AuditPage, AuditQuery } from '../../audit/audit-schema';
import type { AuditTrail } from '../../audit/audit-trail';
import { Envelope, ok } from '../envelope';
import type { RoutePlugin } from '../route-plugin';

export const auditRoutes: RoutePlugin<{ audit: AuditTrail }> = async (app, { audit }) => {
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
    async (request) => ok(audit.list(request.query)),
  );
};
