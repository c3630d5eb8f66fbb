import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { toApiError } from './api/domain-errors';
import { ok } from './api/envelope';
import { ERRORS } from './api/errors';
import { ADMIN_USER } from './auth/accounts';
import { type EngineMessage, type ParentMessage, parseParentMessage } from './contract/engine-process';
import { type Engine, startEngine } from './index';
import { EXECUTION_PROVIDERS, isExecutionProviderSetting } from './inference/providers';
import { ANALYSIS_SIZE_RANGE } from './media/analysis-size';
import { HWACCELS, isHwaccelSetting } from './media/hwaccel';
import { PRIVATE_UMASK } from './store/private-dir';

const USAGE = `usage: npm run engine -- [--host 127.0.0.1] [--port 8080] [--data-dir ./.data] [--console-dir out/renderer]
                         [--analysis-fps 10] [--analysis-size 1280] [--max-source-pixels 8847360]
                         [--allowed-hosts name1,name2]
                         [--install package.zapk ...] [--allowed-origins origin1,origin2]
                         [--builtin-dir assets/builtin] [--log-level info] [--media-dir DIR ...]
                         [--execution-provider auto|cpu|cuda|tensorrt|directml|coreml]
                         [--hwaccel auto|none|vaapi|cuda|qsv|videotoolbox|d3d11va]
The headless engine: the REST API and, when built (npm run build), the console as a web page.
--install: a package the engine makes sure is installed at start (installed, or upgraded when its
version differs); repeat it for more. --console-dir "" serves the API only.
--media-dir: a folder whose files may be video sources of tasks and previews (links resolved before
the check); repeat it for more. Default: <data-dir>/media alone. Any other file is refused.
--execution-provider: where models run (default auto: DirectML on Windows, CoreML on macOS, CUDA on
Linux where its libraries are installed); one that is missing falls back to the CPU with a warning.
--hwaccel: where video is decoded (default auto: the first of the platform's hardware decoders whose
device opens, else software); a stream whose hardware path fails decodes in software, and says so.
--analysis-size: the longest side of the frames analysed and drawn in snapshots and the AI video
(320..3840, default 1280); smaller costs less CPU a camera and shows less detail.
--log-level: what the log gets (default info): JSON lines to stdout and to <data-dir>/logs/engine.log,
rotated by size (5 files of 10 MiB at most); the audit trail of changes is also at GET /api/audit.
Settings file: <data-dir>/settings.json {"host": ..., "port": ..., "analysis_fps": ..., "analysis_size": ...,
"max_source_pixels": ..., "media_dirs": [...],
"allowed_hosts": [...], "execution_provider": ..., "hwaccel": ...};
flags win over it. The API answers to IP addresses and localhost, and to the names in allowed_hosts.`;

/**
 * The channel to the process that started this one, when one did: Electron's utilityProcess
 * (process.parentPort) or Node's child_process.fork (process.send). Plain `npm run engine` has neither.
 */
interface ParentChannel {
  /** `sent` is called once the message has left (or may have: a MessagePort tells nothing). */
  post(message: EngineMessage, sent?: () => void): void;
  onMessage(listener: (message: unknown) => void): void;
}

/** Electron's MessagePortMain of a utility process, as far as the engine uses it. */
interface ParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

const PORT_FLUSH_MS = 200;

function parentChannel(): ParentChannel | null {
  const port = (process as { parentPort?: ParentPort }).parentPort;
  if (port)
    return {
      post: (message, sent) => {
        port.postMessage(message);
        // Queued on the port, which has no delivery callback: give it a moment before an exit.
        if (sent) setTimeout(sent, PORT_FLUSH_MS);
      },
      onMessage: (listener) => port.on('message', ({ data }) => listener(data)),
    };
  const send = process.send?.bind(process);
  if (send)
    return {
      post: (message, sent) => {
        // A parent that went away (the engine is stopping then) hears nothing more.
        if (process.connected) send(message, undefined, undefined, sent);
        else sent?.();
      },
      onMessage: (listener) => process.on('message', listener),
    };
  return null;
}

const parent = parentChannel();

/**
 * Tells the parent the engine is ready, relays the event feed, answers token requests and stops on
 * request (or when a forking parent goes away, so the engine never outlives it).
 */
function serveParent(channel: ParentChannel, engine: Engine, stop: () => Promise<void>): void {
  engine.bus.on('event', ({ body, delivery }) => {
    channel.post({ type: 'event', body });
    channel.post({ type: 'delivery', record: delivery });
  });
  engine.bus.on('delivery', (record) => channel.post({ type: 'delivery', record }));
  channel.onMessage((raw) => {
    const message: ParentMessage | null = parseParentMessage(raw);
    if (!message) return console.error('engine: ignored a message from the parent that is not one');
    if (message.type === 'stop') return void stop();
    if (message.type === 'reset-password') {
      const { id } = message;
      void engine.resetPassword(ADMIN_USER, message.password).then(
        () => channel.post({ type: 'password-reset', id, status: 200, body: ok({ username: ADMIN_USER }) }),
        (error: unknown) => channel.post({ type: 'password-reset', id, ...errorAnswer(error) }),
      );
      return;
    }
    try {
      channel.post({ type: 'token', id: message.id, token: engine.issueToken() });
    } catch (error) {
      // A store that cannot write (a full disk): the parent's request times out; the engine stays.
      console.error(`engine: no token for the parent: ${(error as Error).message}`);
    }
  });
  process.once('disconnect', () => void stop());
  channel.post({ type: 'ready', url: engine.url, port: engine.port });
}

/** A refusal as the API would answer it: the domain's own, else an internal error (logged here). */
function errorAnswer(error: unknown): { status: number; body: unknown } {
  const refused = toApiError(error);
  if (refused) {
    const field = refused.field === undefined ? {} : { field: refused.field };
    return { status: refused.status, body: { code: refused.code, msg: refused.message, ...field } };
  }
  console.error(`engine: the password reset failed: ${(error as Error).message}`);
  const { status, code } = ERRORS.INTERNAL;
  return { status, body: { code, msg: 'internal engine error; see the engine log' } };
}

/** A wrong flag: answered with the usage, unlike a refused start (data dir in use, a bad database). */
class UsageError extends Error {}

/** Host and port from <data-dir>/settings.json, when the operator keeps them there. */
function fileSettings(dataDir: string): {
  host?: string;
  port?: number;
  analysisFps?: number;
  analysisSize?: number;
  maxSourcePixels?: number;
  allowedHosts?: string[];
  mediaDirs?: string[];
  executionProvider?: unknown;
  hwaccel?: unknown;
} {
  const file = join(dataDir, 'settings.json');
  if (!existsSync(file)) return {};
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const hosts = parsed.allowed_hosts;
  if (hosts !== undefined && !(Array.isArray(hosts) && hosts.every((h) => typeof h === 'string')))
    throw new Error(`${file}: allowed_hosts must be an array of host names`);
  const media = parsed.media_dirs;
  if (media !== undefined && !(Array.isArray(media) && media.every((d) => typeof d === 'string' && d !== '')))
    throw new Error(`${file}: media_dirs must be an array of folder paths`);
  return {
    host: typeof parsed.host === 'string' ? parsed.host : undefined,
    port: typeof parsed.port === 'number' ? parsed.port : undefined,
    analysisFps: typeof parsed.analysis_fps === 'number' ? parsed.analysis_fps : undefined,
    analysisSize: typeof parsed.analysis_size === 'number' ? parsed.analysis_size : undefined,
    maxSourcePixels: typeof parsed.max_source_pixels === 'number' ? parsed.max_source_pixels : undefined,
    allowedHosts: hosts,
    // Relative folders are the data dir's, wherever the engine was started from.
    mediaDirs: media?.map((dir) => resolve(dataDir, dir)),
    executionProvider: parsed.execution_provider,
    hwaccel: parsed.hwaccel,
  };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** A comma-separated flag as its non-empty items. */
function list(flag: string | undefined): string[] | undefined {
  return flag?.split(',').filter((item) => item !== '');
}

async function main(): Promise<void> {
  // Everything the engine and its children (SQLite's WAL, ffmpeg's segments, packages, samples)
  // create is its user's alone; startEngine fixes what an earlier run left.
  process.umask(PRIVATE_UMASK);
  const { values } = parseArgs({
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'data-dir': { type: 'string', default: '.data' },
      'console-dir': { type: 'string', default: 'out/renderer' },
      'analysis-fps': { type: 'string' },
      'analysis-size': { type: 'string' },
      'max-source-pixels': { type: 'string' },
      'allowed-hosts': { type: 'string' },
      install: { type: 'string', multiple: true },
      'media-dir': { type: 'string', multiple: true },
      'allowed-origins': { type: 'string' },
      'builtin-dir': { type: 'string' },
      'log-level': { type: 'string' },
      'execution-provider': { type: 'string' },
      hwaccel: { type: 'string' },
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
  if (analysisFps !== undefined && !(analysisFps >= 0.1 && analysisFps <= 60))
    throw new UsageError(`--analysis-fps must be 0.1..60, not ${values['analysis-fps'] ?? analysisFps}`);

  const analysisSize =
    values['analysis-size'] !== undefined ? Number(values['analysis-size']) : settings.analysisSize;
  const { min, max } = ANALYSIS_SIZE_RANGE;
  if (
    analysisSize !== undefined &&
    !(Number.isInteger(analysisSize) && analysisSize >= min && analysisSize <= max)
  )
    throw new UsageError(
      `--analysis-size must be a whole number of pixels ${min}..${max}, not ${values['analysis-size'] ?? analysisSize}`,
    );

  const maxSourcePixels =
    values['max-source-pixels'] !== undefined
      ? Number(values['max-source-pixels'])
      : settings.maxSourcePixels;
  if (maxSourcePixels !== undefined && !(Number.isInteger(maxSourcePixels) && maxSourcePixels > 0))
    throw new UsageError(
      `--max-source-pixels must be a whole number above 0, not ${values['max-source-pixels'] ?? maxSourcePixels}`,
    );

  const logLevel = values['log-level'];
  if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel as LogLevel))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not ${logLevel}`);

  const provider = values['execution-provider'] ?? settings.executionProvider ?? 'auto';
  if (!isExecutionProviderSetting(provider))
    throw new UsageError(
      `--execution-provider must be one of ${EXECUTION_PROVIDERS.join(', ')}, not ${provider}`,
    );

  const hwaccel = values.hwaccel ?? settings.hwaccel ?? 'auto';
  if (!isHwaccelSetting(hwaccel))
    throw new UsageError(`--hwaccel must be one of ${HWACCELS.join(', ')}, not ${hwaccel}`);

  const engine = await startEngine({
    host: values.host ?? settings.host ?? '127.0.0.1',
    port,
    dataDir,
    consoleDir: values['console-dir'] === '' ? undefined : resolve(values['console-dir']),
    allowedOrigins: list(values['allowed-origins']),
    builtinDir: values['builtin-dir'] === undefined ? undefined : resolve(values['builtin-dir']),
    logLevel: logLevel as LogLevel | undefined,
    analysisFps,
    analysisSize,
    maxSourcePixels,
    allowedHosts: list(values['allowed-hosts']) ?? settings.allowedHosts,
    installPackages: values.install?.map((file) => resolve(file)),
    mediaDirs: values['media-dir']?.map((dir) => resolve(dir)) ?? settings.mediaDirs,
    inference: { provider },
    hwaccel,
  });
  console.log(`engine listening on ${engine.url} (data: ${dataDir})`);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= engine.close().then(() => process.exit(0));
    return stopping;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (parent) serveParent(parent, engine, stop);
}

main().catch((error: unknown) => {
  const usage =
    error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  console.error(`engine: ${(error as Error).message}${usage ? `\n${USAGE}` : ''}`);
  if (parent) parent.post({ type: 'fatal', message: (error as Error).message }, () => process.exit(1));
  else process.exit(1);
});
