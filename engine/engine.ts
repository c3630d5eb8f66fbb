import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import packageJson from '../package.json';
import { buildApi } from './api/app';
import { Accounts, ADMIN_USER } from './auth/accounts';
import { randomPassword } from './auth/passwords';
import { systemClock } from './clock';
import type { Engine, EngineOptions } from './index';
import { findFfmpeg } from './media/ffmpeg';
import { probeFirstFrame } from './media/probe';
import { PackageRegistry } from './packages/registry';
import { openDb } from './store/db';
import { TaskRegistry } from './tasks/registry';

/** Where assets/builtin sits when the engine runs from the source tree; a bundled host passes its own. */
export const BUILTIN_PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'assets', 'builtin');
const BUILTIN_INSTALLED = 'builtin_package_installed';

/** Opens the data dir, seeds what a first start needs, resumes live tasks and serves the API. */
export async function startEngine(options: EngineOptions): Promise<Engine> {
  const clock = options.clock ?? systemClock;
  const dataDir = resolve(options.dataDir);
  const db = openDb(dataDir);
  const accounts = new Accounts(db, clock);
  const ffmpeg = findFfmpeg();

  let tasks: TaskRegistry | undefined;
  const packages = new PackageRegistry(db, clock, dataDir, (zapkId) => tasks?.usesPackage(zapkId) ?? false);
  tasks = new TaskRegistry(db, clock, packages, (source, timeoutMs, signal) =>
    probeFirstFrame(ffmpeg, source, timeoutMs, signal),
  );

  const api = await buildApi(
    {
      accounts,
      packages,
      tasks,
      clock,
      tmpDir: join(dataDir, 'tmp'),
      version: packageJson.version,
      startedAt: clock.now(),
      consoleDir: options.consoleDir,
    },
    options.logLevel ?? 'info',
  );

  if (!accounts.hasUser(ADMIN_USER)) {
    const given = options.adminPassword ?? process.env.VC_ADMIN_PASSWORD;
    const password = given || randomPassword();
    accounts.setPassword(ADMIN_USER, password);
    // Printed once, on the first start only: the operator's way in when no password was given.
    if (!given)
      api.log.warn(
        `created user "${ADMIN_USER}" with password ${password} (shown once; change it in the console)`,
      );
  }
  accounts.purgeExpiredTokens();
  await packages.sweepOrphans();
  if (!db.prepare('SELECT 1 FROM settings WHERE key = ?').get(BUILTIN_INSTALLED)) {
    await packages.installDir(options.builtinDir ?? BUILTIN_PACKAGE_DIR, true);
    db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run(
      BUILTIN_INSTALLED,
      JSON.stringify(clock.now()),
    );
  }
  tasks.resumeAll();

  await api.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8080 });
  const address = api.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 8080);
  const host = options.host ?? '127.0.0.1';
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;

  let closed = false;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    issueToken(username = ADMIN_USER) {
      const { token, expiresIn } = accounts.issueToken(username);
      return { access_token: token, token_type: 'Bearer', expires_in: expiresIn };
    },
    resetPassword(username, password) {
      accounts.setPassword(username, password);
    },
    async close() {
      if (closed) return;
      closed = true;
      tasks.shutdown();
      await api.close();
      db.close();
    },
  };
}
