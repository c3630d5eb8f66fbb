import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startEngine } from './index';

const USAGE = `usage: npm run engine -- [--host 127.0.0.1] [--port 8080] [--data-dir ./.data] [--console-dir out/renderer]
                         [--analysis-fps 10] [--max-source-pixels 8847360] [--allowed-hosts name1,name2]
                         [--install package.zapk ...]
The headless engine: the REST API and, when built (npm run build), the console as a web page.
--install: a package the engine makes sure is installed at start (installed, or upgraded when its
version differs); repeat it for more.
Settings file: <data-dir>/settings.json {"host": ..., "port": ..., "analysis_fps": ..., "max_source_pixels": ...,
"allowed_hosts": [...]};
flags win over it. The API answers to IP addresses and localhost, and to the names in allowed_hosts.`;

/** A wrong flag: answered with the usage, unlike a refused start (data dir in use, a bad database). */
class UsageError extends Error {}

/** Host and port from <data-dir>/settings.json, when the operator keeps them there. */
function fileSettings(dataDir: string): {
  host?: string;
  port?: number;
  analysisFps?: number;
  maxSourcePixels?: number;
  allowedHosts?: string[];
} {
  const file = join(dataDir, 'settings.json');
  if (!existsSync(file)) return {};
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const hosts = parsed.allowed_hosts;
  if (hosts !== undefined && !(Array.isArray(hosts) && hosts.every((h) => typeof h === 'string')))
    throw new Error(`${file}: allowed_hosts must be an array of host names`);
  return {
    host: typeof parsed.host === 'string' ? parsed.host : undefined,
    port: typeof parsed.port === 'number' ? parsed.port : undefined,
    analysisFps: typeof parsed.analysis_fps === 'number' ? parsed.analysis_fps : undefined,
    maxSourcePixels: typeof parsed.max_source_pixels === 'number' ? parsed.max_source_pixels : undefined,
    allowedHosts: hosts,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'data-dir': { type: 'string', default: '.data' },
      'console-dir': { type: 'string', default: 'out/renderer' },
      'analysis-fps': { type: 'string' },
      'max-source-pixels': { type: 'string' },
      'allowed-hosts': { type: 'string' },
      install: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const dataDir = resolve(values['data-dir']);
  const settings = fileSettings(dataDir);
  const port = values.port !== undefined ? Number(values.port) : (settings.port ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be 0..65535, not ${values.port}`);

  const analysisFps =
    values['analysis-fps'] !== undefined ? Number(values['analysis-fps']) : settings.analysisFps;
  if (analysisFps !== undefined && !(analysisFps >= 1 && analysisFps <= 60))
    throw new UsageError(`--analysis-fps must be 1..60, not ${values['analysis-fps'] ?? analysisFps}`);

  const maxSourcePixels =
    values['max-source-pixels'] !== undefined
      ? Number(values['max-source-pixels'])
      : settings.maxSourcePixels;
  if (maxSourcePixels !== undefined && !(Number.isInteger(maxSourcePixels) && maxSourcePixels > 0))
    throw new UsageError(
      `--max-source-pixels must be a whole number above 0, not ${values['max-source-pixels'] ?? maxSourcePixels}`,
    );

  const engine = await startEngine({
    host: values.host ?? settings.host ?? '127.0.0.1',
    port,
    dataDir,
    consoleDir: resolve(values['console-dir']),
    analysisFps,
    maxSourcePixels,
    allowedHosts: values['allowed-hosts']?.split(',').filter((name) => name !== '') ?? settings.allowedHosts,
    installPackages: values.install?.map((file) => resolve(file)),
  });
  console.log(`engine listening on ${engine.url} (data: ${dataDir})`);
  const stop = async () => {
    await engine.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  const usage =
    error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  console.error(`engine: ${(error as Error).message}${usage ? `\n${USAGE}` : ''}`);
  process.exit(1);
});
