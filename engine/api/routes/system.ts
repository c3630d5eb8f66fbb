import { SystemInfo } from '../../contract/health';
import type { Api } from '../app';
import type { ApiContext } from '../context';
import { Envelope, ok } from '../envelope';

export function systemRoutes(app: Api, ctx: ApiContext): void {
  app.get(
    '/api/system',
    {
      schema: {
        tags: ['health'],
        summary:
          'Extension: the machine as typed figures (CPU, memory, models, versions, disk, outbox, tasks)',
        response: { 200: Envelope(SystemInfo) },
      },
    },
    async () => ok(await ctx.system.read()),
  );
}
