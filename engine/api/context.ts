import type { Accounts } from '../auth/accounts';
import type { Clock } from '../clock';
import type { PackageRegistry } from '../packages/registry';
import type { TaskRegistry } from '../tasks/registry';

/** What the HTTP layer needs from the engine; routes reach the domain only through this. */
export interface ApiContext {
  accounts: Accounts;
  packages: PackageRegistry;
  tasks: TaskRegistry;
  clock: Clock;
  /** Scratch folder for uploads being validated. */
  tmpDir: string;
  version: string;
  startedAt: number;
  consoleDir?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reachable without a token (only the token and health endpoints). */
    public?: boolean;
    /** Content types the route accepts for a body; JSON when unset. */
    accepts?: readonly string[];
  }
  interface FastifyRequest {
    username?: string;
  }
}
