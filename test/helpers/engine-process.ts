import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { terminate } from './child';
import { TEST_MEDIA_DIRS } from './fixtures';

const ROOT = resolve(import.meta.dirname, '../..');

export interface EngineProcess {
  child: ChildProcess;
  url: string;
  /** Everything the engine wrote to stdout so far (its log and the CLI's lines). */
  output(): string;
}

/** The bundle that `npm run engine` starts (made by `npm run build`). */
export const BUILT_ENGINE = 'out/main/engine.js';

/** The engine's command line in a process of its own: from its sources (through tsx), or the bundle. */
export async function spawnEngine(
  dataDir: string,
  adminPassword: string,
  extraArgs: readonly string[] = [],
  /** Node's own flags and preloads (--expose-gc, --import ...), before the engine's entry point. */
  nodeArgs: readonly string[] = [],
  entry = 'engine/cli.ts',
  /** Given as --media-dir flags; null for none (the engine's default, or its settings.json's). */
  mediaDirs: readonly string[] | null = TEST_MEDIA_DIRS,
): Promise<EngineProcess> {
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const media = (mediaDirs ?? []).flatMap((dir) => ['--media-dir', dir]);
  const child = spawn(
    process.execPath,
    [...loader, ...nodeArgs, entry, '--port', '0', '--data-dir', dataDir, ...media, ...extraArgs],
    {
      cwd: ROOT,
      env: { ...process.env, VC_ADMIN_PASSWORD: adminPassword },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  // Passed through as it comes, and kept for the error of a start that fails.
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    process.stderr.write(chunk);
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const url = await new Promise<string>((done, fail) => {
    child.stdout?.on('data', () => {
      const match = /engine listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) done(match[1]);
    });
    child.once('exit', (code) => fail(new Error(`engine exited with ${code}: ${out}${err}`)));
  });
  return { child, url, output: () => out };
}

export async function signIn(url: string, password: string): Promise<string> {
  const answer = await fetch(`${url}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  return ((await answer.json()) as { data: { access_token: string } }).data.access_token;
}

/** Stops an engine process gracefully and waits for it to exit. */
export function stopEngine(engine: EngineProcess | undefined): Promise<void> {
  return terminate(engine?.child);
}

/** An API call as a client makes it: JSON in, the envelope's data out, a thrown error for any failure code. */
export async function callApi<T>(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const answer = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const envelope = (await answer.json()) as { code: number; msg: string; data: T };
  if (envelope.code !== 0) throw new Error(`${method} ${path}: ${envelope.code} ${envelope.msg}`);
  return envelope.data;
}
