import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { toApiError } from './api/domain-errors';
import { ok } from './api/envelope';
import { ADMIN_USER } from './auth/accounts';
import { INITIAL_PASSWORD_FILE } from './auth/initial-password';
import { usage } from './config/doc';
import { loadEngineConfig } from './config/load';
import { ConfigError } from './config/problems';
import { type EngineMessage, type ParentMessage, parseParentMessage } from './contract/engine-process';
import { ERRORS } from './contract/errors';
import { type Engine, type EngineOptions, startEngine } from './index';
import { PRIVATE_UMASK } from './store/private-dir';

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

/**
 * What the operator needs after a start, as it is: the URL the engine bound (a --port 0 start's real
 * port), what it serves, its data dir and, while it is there, the first start's password file.
 */
function banner(engine: Engine, options: EngineOptions): string {
  const serves =
    options.consoleDir && existsSync(options.consoleDir) ? 'web console and API' : 'API only, no console';
  const lines = [
    `engine listening on ${engine.url} (data: ${options.dataDir})`,
    `Vision Console: ${engine.url} (${serves}); data in ${options.dataDir}. Ctrl-C stops it.`,
  ];
  const passwordFile = join(options.dataDir, INITIAL_PASSWORD_FILE);
  if (existsSync(passwordFile))
    lines.push(`Sign in as ${ADMIN_USER} with the password in ${passwordFile} (deleted once you change it).`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  // Everything the engine and its children (SQLite's WAL, ffmpeg's segments, packages, samples)
  // create is its user's alone; startEngine fixes what an earlier run left.
  process.umask(PRIVATE_UMASK);
  const loaded = loadEngineConfig(undefined, process.env, process.cwd());
  if (loaded.help) {
    console.log(usage());
    return;
  }
  const engine = await startEngine(loaded.options);
  console.log(banner(engine, loaded.options));
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
  // A flag it does not know gets the usage; a refused value, where to read about the settings.
  // Not every error's code is a string (NATS's are numbers).
  const code = (error as { code?: unknown }).code;
  const hint = String(code ?? '').startsWith('ERR_PARSE_ARGS')
    ? `\n${usage()}`
    : error instanceof ConfigError
      ? '\n(npm run engine -- --help lists the flags; docs/configuration.md every setting)'
      : '';
  console.error(`engine: ${(error as Error).message}${hint}`);
  if (parent) parent.post({ type: 'fatal', message: (error as Error).message }, () => process.exit(1));
  else process.exit(1);
});
