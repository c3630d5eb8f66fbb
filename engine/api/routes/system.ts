import { SystemInfo } from '../../contract/health';
import type { SystemMonitor } from '../../system/monitor';
import { Envelope, ok } from '../envelope';
import type { RoutePlugin } from '../route-plugin';

export const systemRoutes: RoutePlugin<{ system: SystemMonitor }> = async (app, { system }) => {
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
    async () => ok(await system.read()),
  );
};
